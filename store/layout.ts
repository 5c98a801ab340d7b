// The store layout, shared by every backend (docs/agent-config.md §1):
//   agents/<name>/config.yaml, agents/<name>/system-prompt.md, skills/<name>/SKILL.md, prompts/<template>.md,
//   templates/<name>/config.yaml and system-prompt.md (agent templates, store/agent-templates.ts)
// A backend only lists keys and reads objects; turning them into definitions happens here, once, so the
// folder and the bucket load the same agents identically.
import { availableParallelism } from 'node:os';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { builtinSkills } from './builtin-skills.ts';
import { parseTemplate } from './agent-templates.ts';
import type { AgentDefinition, AgentTemplate, LoadResult, SharedDefinitions } from './definition.ts';
import { mapLimit } from './map-limit.ts';
import { parsedSafely, type ParsedAgent, type RawAgentFiles } from './parse-definition.ts';
import { ParsePool, parseThreadCount, type AgentFilePaths } from './parse-pool.ts';
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
  /** The object's path on this machine, for a backend of local files: a parse thread then reads it itself. */
  localPath?(key: string): string;
}

/** Objects read at once: enough to hide a bucket's latency, few enough not to exhaust sockets or file handles. */
const READ_CONCURRENCY = 16;
/**
 * Agents read (and, without parse threads, parsed) between two turns of the event loop, and sent to a parse thread
 * at once: a folder is read synchronously and parsing is synchronous, so without turns 100,000 agents would hold
 * the loop (leases, queue locks) for seconds.
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

/** How a load parses (tests choose; a store leaves it to parseThreadCount). */
export interface LoadOptions {
  /** Parse threads (0: the loading thread alone); default from the count of agents and of cores. */
  parseThreads?: number;
  /** The parse thread's module (tests only). */
  parseWorkerUrl?: URL;
}

export async function loadFromReader(reader: StoreReader, opts: LoadOptions = {}): Promise<LoadResult> {
  const layout = classifyKeys(await reader.keys());
  // Started first, so the threads import their modules while the shared definitions and the first files are read.
  const pool = new ParsePool(opts.parseThreads ?? parseThreadCount(layout.agents.length, availableParallelism()), opts.parseWorkerUrl);
  try {
    const problems: Problem[] = [];
    const shared = await loadShared(reader, layout, problems);
    // Batch by batch, in listing order (so problems and agents come out the same every time). A store of local files
    // with parse threads hands each thread the paths: reading is a third of the work and waits on the system, so the
    // threads read too. Otherwise a batch is read here (in parallel, bounded) and parsed while the next is read.
    const localPath = pool.threads > 0 ? reader.localPath?.bind(reader) : undefined;
    const readBatch = async (folders: readonly string[]): Promise<RawAgentFiles[]> => {
      const files = await mapLimit(folders, READ_CONCURRENCY, async (folder): Promise<RawAgentFiles[]> => {
        const configKey = `agents/${folder}/config.yaml`;
        const promptKey = `agents/${folder}/system-prompt.md`;
        const [configText, promptText] = await Promise.all([reader.read(configKey), reader.read(promptKey)]);
        if (configText === undefined) return []; // deleted between listing and reading
        return [{ folder, configFile: reader.displayName(configKey), configText, promptFile: reader.displayName(promptKey), promptText }];
      });
      return files.flat();
    };
    const batches: Array<Promise<ParsedAgent[]>> = [];
    for (let start = 0; start < layout.agents.length; start += AGENTS_PER_TURN) {
      const folders = layout.agents.slice(start, start + AGENTS_PER_TURN);
      if (localPath) {
        const files = folders.map((folder): AgentFilePaths => {
          const configKey = `agents/${folder}/config.yaml`;
          const promptKey = `agents/${folder}/system-prompt.md`;
          return { folder, configFile: reader.displayName(configKey), configPath: localPath(configKey), promptFile: reader.displayName(promptKey), promptPath: localPath(promptKey) };
        });
        // A thread that cannot read them hands the batch back: read here then, as without threads.
        batches.push(pool.readAndParse(files, () => readBatch(folders)));
        continue;
      }
      batches.push(pool.parse(await readBatch(folders)));
      await nextTurn();
    }
    const agents: AgentDefinition[] = [];
    for (const batch of await Promise.all(batches)) {
      for (const parsed of batch) {
        problems.push(...parsed.problems);
        if (parsed.definition) agents.push({ ...parsed.definition, shared });
      }
    }
    return { agents, problems, shared, parsedOnThreads: pool.parsedOnThreads };
  } finally {
    await pool.close();
  }
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
