// Turns the two files of one agent into a definition or a list of problems; shared by every store backend.
import { createHash } from 'node:crypto';
import { AgentConfigSchema, LEGACY_KEYS } from './agent-config.ts';
import type { AgentDefinition } from './definition.ts';
import type { Problem } from './problems.ts';
import { validateYaml } from './yaml-validate.ts';

export interface RawAgentFiles {
  /** The folder name, which must equal `name` in the config. */
  folder: string;
  configFile: string;
  configText: string;
  promptFile: string;
  /** undefined when system-prompt.md does not exist. */
  promptText: string | undefined;
}

export function parseDefinition(raw: RawAgentFiles): { definition?: AgentDefinition; problems: Problem[] } {
  const result = validateYaml(raw.configFile, raw.configText, AgentConfigSchema);
  const problems = [...result.problems];
  if (raw.promptText === undefined) {
    problems.push({ file: raw.promptFile, message: 'missing system prompt (every agent needs a system-prompt.md beside its config.yaml)', severity: 'error' });
  }
  if (!result.ok) return { problems };

  const config = result.value;
  if (config.name !== raw.folder) {
    const at = lineOfKey(raw.configText, 'name');
    problems.push({ file: raw.configFile, ...at, field: 'name', message: `name "${config.name}" must equal its folder name "${raw.folder}"`, severity: 'error' });
  }
  for (const key of LEGACY_KEYS) {
    if (config[key] !== undefined) {
      problems.push({ file: raw.configFile, field: key, message: `legacy key "${key}" is ignored`, severity: 'warning' });
    }
  }
  if (config.type === 'custom') {
    problems.push({ file: raw.configFile, field: 'type', message: 'type "custom" is deprecated; it runs as "llm"', severity: 'warning' });
  }
  if (problems.some((p) => p.severity === 'error') || raw.promptText === undefined) return { problems };
  return {
    definition: { name: config.name, config, systemPrompt: raw.promptText, files: { config: raw.configFile, prompt: raw.promptFile }, hash: definitionHash(raw.configText, raw.promptText) },
    problems,
  };
}

/** Line and column of a top-level key's value, for problems found after validation. */
function lineOfKey(text: string, key: string): { line?: number; column?: number } {
  const lines = text.split('\n');
  const i = lines.findIndex((l) => l.startsWith(`${key}:`));
  if (i < 0) return {};
  const col = lines[i]!.slice(key.length + 1).search(/\S/);
  return { line: i + 1, column: col < 0 ? 1 : key.length + 2 + col };
}

/** The hash of an agent's two files as read: equal texts, equal hash, whichever backend read them. */
export function definitionHash(configText: string, promptText: string): string {
  // Lengths first, so no split of the same bytes between the two files gives the same hash.
  return createHash('sha256').update(`${configText.length}:${promptText.length}:`).update(configText).update(promptText).digest('hex');
}
