// Agent definitions from a local folder in the store layout (store/layout.ts). Changes are noticed two ways:
// fs.watch of every folder of the store (store/tree-watch.ts), debounced (editors write a file in several steps:
// truncate, write, rename), filtered to the store's own files; and a periodic check of those files' inode, size and
// times, for what no watch reports (a folder that could not be watched: past the kernel's inotify limit, a network
// file system): the check then notices the change and starts the watches anew. The check's interval stretches with
// what a check costs (store/check-pacing.ts), so a large store is not stat'ed continuously.
import { existsSync, watch as fsWatch } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { nextCheckDelayMs, stretchWorthLogging } from './check-pacing.ts';
import { StoreUnavailableError, type DefinitionStore, type LoadResult } from './definition.ts';
import { isStoreKey, loadFromReader, storeFileKeys, type StoreReader } from './layout.ts';
import { readIfExists } from './local-files.ts';
import { mapLimit } from './map-limit.ts';
import { watchTree } from './tree-watch.ts';

/**
 * How often the store's own files are compared while watching (`store.check_interval`), at least; 0 turns the check
 * off. A store whose check costs more waits longer (store/check-pacing.ts).
 */
export const DEFAULT_CHECK_INTERVAL_MS = 2_000;
/** Files stat'ed at once by the check. */
const STAT_CONCURRENCY = 16;

/** Where the store says that its check's interval stretched (the daemon's logger). */
export interface StoreLogger {
  info(obj: object, msg: string): void;
}

/** Layout key → inode, size and times of the file ('-' when it is missing). */
export type FileSignatures = ReadonlyMap<string, string>;

/** A file's inode, size and times; '-' when it is missing. */
async function signatureOf(path: string): Promise<string> {
  const st = await stat(path, { bigint: true }).catch(() => undefined);
  return st ? `${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}` : '-';
}

/** Keys whose file appeared, went or changed between two checks. */
export function changedKeys(before: FileSignatures, after: FileSignatures): string[] {
  const changed = [...after].filter(([k, sig]) => before.get(k) !== sig).map(([k]) => k);
  return [...changed, ...[...before.keys()].filter((k) => !after.has(k))];
}

/** The first five keys, and how many more: a log line's worth. */
function someOf(keys: readonly string[]): string {
  return `${keys.slice(0, 5).join(', ')}${keys.length > 5 ? ` and ${keys.length - 5} more` : ''}`;
}

/** A signature's change time in epoch ms (undefined for a missing file). */
function changeTimeMs(signature: string): number | undefined {
  const ns = signature.split(':')[3];
  return ns === undefined ? undefined : Number(BigInt(ns) / 1_000_000n);
}

/**
 * Keys saved, created or removed since a load began (listed by it and gone, there and not listed by it, or changed
 * after the millisecond it began): what a watch that began after the load has not seen. The file system's clock is
 * coarse (a few ms behind), so a save from before the load never counts (a spurious reload is not made at every
 * start); one within a tick of the load's start is most likely read by the load itself. A listed file missing now
 * counts when its folder changed since (`folderChangedAt`, epoch ms, by key): otherwise it was missing at the load
 * too (an agent without its prompt). Clocks of a network file system that disagree with this machine's make this
 * check miss or repeat; the watches and later checks are not affected.
 */
export function changedSinceLoad(load: { startedAt: number; keys: ReadonlySet<string> }, now: FileSignatures, folderChangedAt: ReadonlyMap<string, number> = new Map()): string[] {
  const changed = [...now]
    // Whole ms on both sides, as the load's start is: a change in the millisecond it began counts as before it.
    .filter(([k, sig]) => (sig === '-' ? load.keys.has(k) && Math.floor(folderChangedAt.get(k) ?? 0) > load.startedAt : !load.keys.has(k) || (changeTimeMs(sig) ?? 0) > load.startedAt))
    .map(([k]) => k);
  return [...changed, ...[...load.keys].filter((k) => !now.has(k))];
}

/** The change time (epoch ms) of the folder of each listed key missing in `now`: whether it went since a load. */
async function foldersOfMissing(keys: ReadonlySet<string>, now: FileSignatures, pathOf: (key: string) => string): Promise<Map<string, number>> {
  const missing = [...now].filter(([k, sig]) => sig === '-' && keys.has(k)).map(([k]) => k);
  const times = await mapLimit(missing, STAT_CONCURRENCY, async (k) => (await stat(dirname(pathOf(k))).catch(() => undefined))?.ctimeMs ?? 0);
  return new Map(missing.map((k, i) => [k, times[i]!]));
}

export class LocalFolderStore implements DefinitionStore {
  readonly location: string;
  readonly agentsDir: string;
  /** The store root, which holds `agents/`, `skills/` and `prompts/`. */
  readonly root: string;
  readonly #debounceMs: number;
  readonly #checkIntervalMs: number;
  readonly #parseThreads: number | undefined;
  readonly #logger: StoreLogger | undefined;
  /** When the last load began and the files it listed: a watch's first check compares the store with them. */
  #lastLoad: { startedAt: number; keys: ReadonlySet<string> } | undefined;
  #watched = false;

  /**
   * Accepts the store root (holding `agents/`) or the `agents` folder itself. `parseThreads`: how many threads parse
   * the definitions (tests); by default as many as the store's size and the machine's cores call for (store/parse-pool.ts).
   */
  constructor(dir: string, opts: { debounceMs?: number; checkIntervalMs?: number; parseThreads?: number; logger?: StoreLogger } = {}) {
    if (existsSync(join(dir, 'agents'))) {
      this.root = dir;
      this.agentsDir = join(dir, 'agents');
    } else {
      this.root = basename(dir) === 'agents' ? dirname(dir) : dir;
      this.agentsDir = dir;
    }
    this.location = this.agentsDir;
    this.#debounceMs = opts.debounceMs ?? 200;
    this.#checkIntervalMs = opts.checkIntervalMs ?? DEFAULT_CHECK_INTERVAL_MS;
    this.#parseThreads = opts.parseThreads;
    this.#logger = opts.logger;
  }

  async load(): Promise<LoadResult> {
    const startedAt = Date.now();
    const reader = this.#reader();
    const result = await loadFromReader(reader, this.#parseThreads === undefined ? {} : { parseThreads: this.#parseThreads });
    // Kept only for a watch yet to begin (a large store's keys are megabytes): its first check compares with them.
    if (!this.#watched) this.#lastLoad = { startedAt, keys: new Set(storeFileKeys(reader.listed ?? [])) };
    return result;
  }

  watch(onChange: (noticed?: string) => void): () => void {
    this.#watched = true;
    /** The load before this watch: its saves until the first check are no watcher's, so that check looks for them. */
    let loaded = this.#lastLoad;
    this.#lastLoad = undefined;
    let timer: NodeJS.Timeout | undefined;
    /** How the pending change was noticed, when the periodic check found it. */
    let noticed: string | undefined;
    const watchers = new Map<string, { close(): void }>();
    /** The store's files watchers reported since the last check, as each was when reported. */
    const heard = new Map<string, string>();
    const reader = this.#reader();
    const fire = (how?: string): void => {
      arm(); // a skills/ or prompts/ folder created since start gets its own watcher
      noticed = how ?? noticed;
      clearTimeout(timer);
      timer = setTimeout(() => {
        const how = noticed;
        noticed = undefined;
        onChange(how);
      }, this.#debounceMs);
    };
    let toldUnwatchable = false;
    // Said once: past inotify's limit (fs.inotify.max_user_watches) saves wait for the periodic check.
    const unwatchable = (dir: string, err: unknown): void => {
      if (toldUnwatchable) return;
      toldUnwatchable = true;
      this.#logger?.info({ store: this.location, folder: dir, err: err instanceof Error ? err.message : String(err) }, 'a folder of the store cannot be watched; its saves are found by the periodic check (store.check_interval)');
    };
    const watchDir = (dir: string, recursive: boolean, keyOf: (file: string) => string): void => {
      if (watchers.has(dir) || !existsSync(dir)) return;
      const heardOf = (file: string | null): void => {
        const key = file === null ? undefined : keyOf(file);
        // Only the store's own files: a log file beside the store must not reload it at every line it writes.
        if (key !== undefined && !isStoreKey(key)) return;
        if (key !== undefined) void signatureOf(reader.displayName(key)).then((sig) => heard.set(key, sig));
        fire();
      };
      if (recursive) return void watchers.set(dir, watchTree(dir, heardOf, unwatchable));
      try {
        const w = fsWatch(dir, (_event, file) => heardOf(file));
        w.on('error', () => {
          w.close();
          watchers.delete(dir);
        });
        watchers.set(dir, w);
      } catch (err) {
        unwatchable(dir, err); // still noticed by the periodic check, `warren reload` and SIGHUP
      }
    };
    let stopped = false;
    const arm = (): void => {
      if (stopped) return; // a check or an event that was under way when the watch stopped
      watchDir(this.agentsDir, true, (f) => `agents/${f}`);
      if (this.root === this.agentsDir) return;
      watchDir(join(this.root, 'skills'), true, (f) => `skills/${f}`);
      watchDir(join(this.root, 'prompts'), true, (f) => `prompts/${f}`);
      watchDir(join(this.root, 'templates'), true, (f) => `templates/${f}`);
      // The root itself, shallowly: only to notice skills/ or prompts/ appearing (never a deep watch of a
      // root that might be a whole repository).
      watchDir(this.root, false, (f) => f);
    };
    const rearm = (): void => {
      for (const w of watchers.values()) w.close();
      watchers.clear();
      arm();
    };
    arm();

    let check: NodeJS.Timeout | undefined;
    const configuredMs = this.#checkIntervalMs;
    if (configuredMs > 0) {
      /** The files as the last check saw them; undefined until the first check. */
      let last: FileSignatures | undefined;
      let loggedMs: number | undefined;
      // One check at a time, the next scheduled when this one ends: its wait stretches with what it cost.
      const runCheck = async (): Promise<void> => {
        const t0 = performance.now();
        const now = await this.signatures(); // never rejects: a file or folder it cannot read is an entry
        const lastCheckMs = performance.now() - t0;
        if (stopped) return; // a check under way when the watch stopped
        if (last !== undefined) {
          // A change is the watchers' when they reported the file as it is now; a later write they missed is not.
          const missed = changedKeys(last, now).filter((k) => heard.get(k) !== now.get(k));
          if (missed.length > 0) {
            // Changes no watcher reported: they went deaf (see the top of the file), so they start again.
            rearm();
            fire(`by the periodic check, not fs.watch (its watchers start anew): ${someOf(missed)}`);
          }
          heard.clear();
        } else if (loaded !== undefined) {
          const since = changedSinceLoad(loaded, now, await foldersOfMissing(loaded.keys, now, (k) => reader.displayName(k)));
          loaded = undefined;
          if (since.length > 0) fire(`by the first check, saved since the store was loaded: ${someOf(since)}`);
        }
        last = now;
        const delayMs = nextCheckDelayMs({ configuredMs, lastCheckMs });
        if (stretchWorthLogging({ configuredMs, loggedMs, delayMs })) {
          loggedMs = delayMs;
          this.#logger?.info({ store: this.location, files: now.size, checkMs: Math.round(lastCheckMs), checkIntervalMs: delayMs, configuredMs }, "store check interval stretched with the store's size");
        }
        check = setTimeout(() => void runCheck(), delayMs);
        check.unref();
      };
      void runCheck();
    }
    return () => {
      stopped = true;
      clearTimeout(timer);
      clearTimeout(check);
      for (const w of watchers.values()) w.close();
      watchers.clear();
    };
  }

  /**
   * What the store's own files look like now, cheaply: inode, size, modification and change time of each (no
   * reads). Any save changes its file's entry, in place or by rename. One periodic check; public so bench/scale.ts
   * can time one.
   */
  async signatures(): Promise<FileSignatures> {
    const reader = this.#reader();
    let keys: string[];
    try {
      keys = storeFileKeys(await reader.keys());
    } catch {
      return new Map([['', 'unavailable']]);
    }
    const sigs = await mapLimit(keys, STAT_CONCURRENCY, (key) => signatureOf(reader.displayName(key)));
    return new Map(keys.map((k, i) => [k, sigs[i]!]));
  }

  #reader(): FolderReader {
    return new FolderReader(this.root, this.agentsDir);
  }
}

/** Maps layout keys onto the folder; `agents/` may be the store root's subfolder or a folder given directly. */
class FolderReader implements StoreReader {
  readonly #root: string;
  readonly #agentsDir: string;
  /** What keys() answered last. */
  listed: string[] | undefined;

  constructor(root: string, agentsDir: string) {
    this.#root = root;
    this.#agentsDir = agentsDir;
  }

  async keys(): Promise<string[]> {
    let agentFolders: string[];
    try {
      agentFolders = await subfolders(this.#agentsDir);
    } catch (err) {
      throw new StoreUnavailableError(this.#agentsDir, `cannot read agents folder: ${(err as Error).message}`, { cause: err });
    }
    const keys = agentFolders.map((f) => `agents/${f}/config.yaml`);
    const skillsDir = join(this.#root, 'skills');
    if (this.#root !== this.#agentsDir && existsSync(skillsDir)) {
      keys.push(...(await subfolders(skillsDir)).map((f) => `skills/${f}/SKILL.md`));
    }
    const promptsDir = join(this.#root, 'prompts');
    if (this.#root !== this.#agentsDir && existsSync(promptsDir)) {
      keys.push(...(await readdir(promptsDir)).filter((f) => f.endsWith('.md')).map((f) => `prompts/${f}`));
    }
    const templatesDir = join(this.#root, 'templates');
    if (this.#root !== this.#agentsDir && existsSync(templatesDir)) {
      keys.push(...(await subfolders(templatesDir)).map((f) => `templates/${f}/config.yaml`));
    }
    this.listed = keys;
    return keys;
  }

  // Synchronous on purpose: a definition is a few hundred bytes, and the thread-pool round trips of an async
  // read (open, stat, read, close) cost about seven times the read itself (100,000 agents: ~6 s of a load).
  // loadFromReader gives the event loop a turn between batches.
  read(key: string): Promise<string | undefined> {
    return Promise.resolve(readIfExists(this.displayName(key)));
  }

  localPath(key: string): string {
    return this.displayName(key);
  }

  displayName(key: string): string {
    return key.startsWith('agents/') ? join(this.#agentsDir, key.slice('agents/'.length)) : join(this.#root, key);
  }
}

async function subfolders(dir: string): Promise<string[]> {
  return (await readdir(dir, { withFileTypes: true })).filter((e) => e.isDirectory()).map((e) => e.name);
}
