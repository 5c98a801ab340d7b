// Turns the two files of one agent into a definition or a list of problems; shared by every store backend.
import { createHash } from 'node:crypto';
import { LineCounter, parse, parseDocument } from 'yaml';
import { AgentConfigSchema, LEGACY_KEYS, type AgentConfig } from './agent-config.ts';
import type { AgentDefinition } from './definition.ts';
import { grantProblems } from './grants.ts';
import type { Problem } from './problems.ts';
import { locate, validateYaml } from './yaml-validate.ts';

export interface RawAgentFiles {
  /** The folder name, which must equal `name` in the config. */
  folder: string;
  configFile: string;
  configText: string;
  promptFile: string;
  /** undefined when system-prompt.md does not exist. */
  promptText: string | undefined;
}

/** One agent's files turned into a definition or problems; what a parse thread sends back (store/parse-pool.ts). */
export interface ParsedAgent {
  definition?: AgentDefinition;
  problems: Problem[];
}

/** parseDefinition, whatever it throws: the agent's own problem, never the whole store's. */
export function parseAgentSafely(raw: RawAgentFiles): ParsedAgent {
  return parsedSafely(raw.configFile, () => parseDefinition(raw), (failed) => ({ problems: failed }));
}

/**
 * One file's parse, whatever it throws: a file that fails is its own agent's (or skill's) problem, reported with
 * the file and the reason, and never stops the others from loading.
 */
export function parsedSafely<T extends { problems: Problem[] }>(file: string, parse: () => T, failed: (problems: Problem[]) => NoInfer<T>): T {
  try {
    return parse();
  } catch (err) {
    return failed([{ file, message: `could not be read: ${err instanceof Error ? err.message : String(err)}`, severity: 'error' }]);
  }
}

export function parseDefinition(raw: RawAgentFiles): ParsedAgent {
  const result = validateYaml(raw.configFile, raw.configText, AgentConfigSchema);
  const problems = [...result.problems];
  if (raw.promptText === undefined) {
    problems.push({ file: raw.promptFile, message: 'missing system prompt (every agent needs a system-prompt.md beside its config.yaml)', severity: 'error' });
  }
  if (!result.ok) {
    // The checks after the schema still run on what the file says, so one fix round shows every problem (a
    // provider typo must not hide a name that differs from the folder's).
    const later = crossChecks(raw, plainValues(raw.configText));
    return { problems: [...problems, ...later].sort(byPosition) };
  }

  const config = result.value;
  problems.push(...crossChecks(raw, { name: config.name, grants: config.capabilities.grants, mcpServers: config.capabilities.mcp_servers.map(mcpServerName) }));
  for (const key of LEGACY_KEYS) {
    if (config[key] !== undefined) {
      problems.push({ file: raw.configFile, field: key, message: `legacy key "${key}" is ignored`, severity: 'warning' });
    }
  }
  // A later major version of the schema may mean keys differently: refused, not guessed at.
  if (!config.version.startsWith('1.')) {
    problems.push({ file: raw.configFile, field: 'version', message: `schema version ${config.version} is not one this warren reads (1.x)`, severity: 'error' });
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

/** What the checks beyond the schema read; each is left out when the file does not give it in the right shape. */
interface CrossCheckInput {
  name?: string;
  grants?: readonly string[];
  mcpServers?: readonly string[];
}

/** The checks beyond the schema: the name against the folder, the grants of services warren knows. */
function crossChecks(raw: RawAgentFiles, input: CrossCheckInput): Problem[] {
  const problems: Problem[] = [];
  if (input.name !== undefined && input.name !== raw.folder) {
    const at = lineOfKey(raw.configText, 'name');
    problems.push({ file: raw.configFile, ...at, field: 'name', message: `name "${input.name}" must equal its folder name "${raw.folder}"`, severity: 'error' });
  }
  const bad = input.grants ? grantProblems(input.grants, input.mcpServers ?? []) : [];
  if (bad.length) {
    // Located only when there is something to say: parsing for positions again costs, and agents load by the thousand.
    const lineCounter = new LineCounter();
    const doc = parseDocument(raw.configText, { lineCounter });
    for (const b of bad) {
      const path = ['capabilities', 'grants', b.index];
      problems.push({ file: raw.configFile, ...locate(doc, lineCounter, path), field: `capabilities.grants[${b.index}]`, message: b.message, severity: b.severity });
    }
  }
  return problems;
}

/** The name, grants and MCP server names as the file gives them, for a file the schema refused. */
function plainValues(text: string): CrossCheckInput {
  let data: unknown;
  try {
    data = parse(text);
  } catch {
    return {}; // a syntax error: validateYaml said so
  }
  if (!isRecord(data)) return {};
  const capabilities = isRecord(data.capabilities) ? data.capabilities : {};
  const grants = Array.isArray(capabilities.grants) && capabilities.grants.every((g) => typeof g === 'string') ? capabilities.grants : undefined;
  const servers = Array.isArray(capabilities.mcp_servers) ? capabilities.mcp_servers.flatMap((s: unknown) => (typeof s === 'string' ? [s] : isRecord(s) && typeof s.name === 'string' ? [s.name] : [])) : [];
  return { ...(typeof data.name === 'string' ? { name: data.name } : {}), ...(grants ? { grants, mcpServers: servers } : {}) };
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function mcpServerName(server: AgentConfig['capabilities']['mcp_servers'][number]): string {
  return typeof server === 'string' ? server : server.name;
}

function byPosition(a: Problem, b: Problem): number {
  if (a.file !== b.file) return a.file < b.file ? -1 : 1;
  return (a.line ?? 0) - (b.line ?? 0) || (a.column ?? 0) - (b.column ?? 0);
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
