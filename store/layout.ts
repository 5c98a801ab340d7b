// The store layout, shared by every backend (docs/agent-config.md §1):
//   agents/<name>/config.yaml, agents/<name>/system-prompt.md, skills/<name>/SKILL.md, prompts/<template>.md,
//   templates/<name>/config.yaml and system-prompt.md (agent templates, store/agent-templates.ts)
// A backend only lists keys and reads objects; turning them into definitions happens here, once, so the
// folder and the bucket load the same agents identically.
import { setImmediate as nextTurn } from 'node:timers/promises';
import { builtinSkills } from './builtin-skills.ts';
import { parseTemplate } from './agent-templates.ts';
import type { AgentDefinition, AgentTemplate, LoadResult, SharedDefinitions } from './definition.ts';
import { mapLimit } from './map-limit.ts';
import { parseDefinition } from './parse-definition.ts';
import type { Problem } from './problems.ts';
import { parseSkill, type Skill } from './skill.ts';

/** The read side of a backend, in layout keys (`agents/greeter/config.yaml`). */
export interface StoreReader {
  /** Every key in the store (order does not matter). Throws StoreUnavailableError when the store cannot be listed. */
  keys(): Promise<string[]>;
  /** The object's text; undefined when it does not exist. */
  read(key: string): Promise<string | undefined>;
  /** The name shown in problems: a file path or an s3:// URL. */
  displayName(key: string): string;
}

/** Objects read at once: enough to hide a bucket's latency, few enough not to exhaust sockets or file handles. */
const READ_CONCURRENCY = 16;
/**
 * Agents read or parsed between two turns of the event loop: a folder is read synchronously and parsing is
 * synchronous, so without turns 100,000 agents would hold the loop (leases, queue locks) for seconds.
 */
const AGENTS_PER_TURN = 500;

const AGENT_CONFIG = /^agents\/([^/]+)\/config\.yaml$/;
const SKILL_FILE = /^skills\/([^/]+)\/SKILL\.md$/;
const TEMPLATE_FILE = /^prompts\/([a-z0-9_-]+)\.md$/;
const AGENT_TEMPLATE = /^templates\/([^/]+)\/config\.yaml$/;
const AGENT_TEMPLATE_PROMPT = /^templates\/[^/]+\/system-prompt\.md$/;

/**
 * Whether a changed path (a layout key, `agents/greeter/config.yaml`) can change what the store loads: one of its
 * own files, or a folder that holds them (an agent folder created, renamed or removed). An editor's swap and
 * backup files, a workspace under an agent's folder, or a log file beside the store are not.
 */
export function isStoreKey(key: string): boolean {
  return STORE_FOLDER.test(key) || AGENT_CONFIG.test(key) || AGENT_PROMPT.test(key) || SKILL_FILE.test(key) || TEMPLATE_FILE.test(key) || AGENT_TEMPLATE.test(key) || AGENT_TEMPLATE_PROMPT.test(key);
}
const AGENT_PROMPT = /^agents\/[^/]+\/system-prompt\.md$/;
// Agent and skill folders are named like agents (store/agent-config.ts): no dots, so `agents/daemon.log` is no folder.
const STORE_FOLDER = /^(agents|skills|templates)(\/[A-Za-z0-9_-]+)?$|^prompts$/;

/** The files a listing stands for, sorted: each agent's config.yaml and its system-prompt.md, each skill and template. */
export function storeFileKeys(keys: readonly string[]): string[] {
  return keys.flatMap((k) => {
    const agent = AGENT_CONFIG.exec(k)?.[1];
    const template = AGENT_TEMPLATE.exec(k)?.[1];
    return agent !== undefined ? [k, `agents/${agent}/system-prompt.md`] : template !== undefined ? [k, `templates/${template}/system-prompt.md`] : [k];
  }).sort();
}

export interface LayoutKeys {
  agents: string[];
  skills: string[];
  templates: string[];
  /** Agent template folders (`templates/<name>/config.yaml`). */
  agentTemplates: string[];
}

/** Sorts a listing into the three kinds of definitions; anything else in the store is ignored. */
export function classifyKeys(keys: readonly string[]): LayoutKeys {
  const sorted = [...keys].sort();
  return {
    agents: sorted.flatMap((k) => AGENT_CONFIG.exec(k)?.[1] ?? []),
    skills: sorted.filter((k) => SKILL_FILE.test(k)),
    templates: sorted.filter((k) => TEMPLATE_FILE.test(k)),
    agentTemplates: sorted.flatMap((k) => AGENT_TEMPLATE.exec(k)?.[1] ?? []),
  };
}

export async function loadFromReader(reader: StoreReader): Promise<LoadResult> {
  const layout = classifyKeys(await reader.keys());
  const problems: Problem[] = [];
  const shared = await loadShared(reader, layout, problems);
  // Read in parallel (bounded), then parse in listing order, so problems and agents come out the same every time.
  let readSinceTurn = 0;
  let turn: Promise<void> | undefined;
  const files = await mapLimit(layout.agents, READ_CONCURRENCY, async (folder) => {
    // One turn that every reader waits for: a reader pausing alone would let the others carry on without one.
    if (++readSinceTurn > AGENTS_PER_TURN) {
      readSinceTurn = 0;
      turn = nextTurn().then(() => void (turn = undefined));
    }
    if (turn) await turn;
    const configKey = `agents/${folder}/config.yaml`;
    const promptKey = `agents/${folder}/system-prompt.md`;
    const [configText, promptText] = await Promise.all([reader.read(configKey), reader.read(promptKey)]);
    return { folder, configKey, promptKey, configText, promptText };
  });
  const agents: AgentDefinition[] = [];
  for (const [i, f] of files.entries()) {
    if (i > 0 && i % AGENTS_PER_TURN === 0) await nextTurn();
    const configText = f.configText;
    if (configText === undefined) continue; // deleted between listing and reading
    const parsed = parsedSafely(reader.displayName(f.configKey), () =>
      parseDefinition({
        folder: f.folder,
        configFile: reader.displayName(f.configKey),
        configText,
        promptFile: reader.displayName(f.promptKey),
        promptText: f.promptText,
      }),
      (failed) => ({ problems: failed }),
    );
    problems.push(...parsed.problems);
    if (parsed.definition) agents.push({ ...parsed.definition, shared });
  }
  return { agents, problems, shared };
}

async function loadShared(reader: StoreReader, layout: LayoutKeys, problems: Problem[]): Promise<SharedDefinitions> {
  const skills = new Map<string, Skill>(builtinSkills().map((s) => [s.name, s]));
  const skillTexts = await mapLimit(layout.skills, READ_CONCURRENCY, (key) => reader.read(key));
  layout.skills.forEach((key, i) => {
    const text = skillTexts[i];
    if (text === undefined) return;
    const folder = SKILL_FILE.exec(key)?.[1] ?? '';
    const parsed = parsedSafely(reader.displayName(key), () => parseSkill(reader.displayName(key), text, folder), (failed) => ({ problems: failed }));
    problems.push(...parsed.problems);
    if (parsed.skill) skills.set(parsed.skill.name, parsed.skill);
  });
  const templates: Record<string, string> = {};
  for (const key of layout.templates) {
    const text = await reader.read(key);
    const name = TEMPLATE_FILE.exec(key)?.[1];
    if (text !== undefined && name) templates[name] = text;
  }
  const agentTemplates: Record<string, AgentTemplate> = {};
  for (const folder of layout.agentTemplates) {
    const configKey = `templates/${folder}/config.yaml`;
    const promptKey = `templates/${folder}/system-prompt.md`;
    const [configText, promptText] = await Promise.all([reader.read(configKey), reader.read(promptKey)]);
    if (configText === undefined) continue;
    const files = { folder, configFile: reader.displayName(configKey), configText, promptFile: reader.displayName(promptKey), promptText };
    const parsed = parsedSafely(files.configFile, () => parseTemplate(files), (failed) => ({ problems: failed }));
    problems.push(...parsed.problems);
    if (parsed.template) agentTemplates[folder] = parsed.template;
  }
  return { skills: [...skills.values()], templates, agentTemplates };
}

/**
 * One file's parse, whatever it throws: a file that fails is its own agent's (or skill's) problem, reported with
 * the file and the reason, and never stops the others from loading.
 */
function parsedSafely<T extends { problems: Problem[] }>(file: string, parse: () => T, failed: (problems: Problem[]) => NoInfer<T>): T {
  try {
    return parse();
  } catch (err) {
    return failed([{ file, message: `could not be read: ${err instanceof Error ? err.message : String(err)}`, severity: 'error' }]);
  }
}
