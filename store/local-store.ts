// Agent definitions from a local folder in the store layout (store/layout.ts). Changes are noticed with
// fs.watch, debounced, because editors write a file in several steps (truncate, write, rename).
import { existsSync, readFileSync, watch as fsWatch, type FSWatcher } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { StoreUnavailableError, type DefinitionStore, type LoadResult } from './definition.ts';
import { loadFromReader, type StoreReader } from './layout.ts';

export class LocalFolderStore implements DefinitionStore {
  readonly location: string;
  readonly agentsDir: string;
  /** The store root, which holds `agents/`, `skills/` and `prompts/`. */
  readonly root: string;
  readonly #debounceMs: number;

  /** Accepts the store root (holding `agents/`) or the `agents` folder itself. */
  constructor(dir: string, opts: { debounceMs?: number } = {}) {
    if (existsSync(join(dir, 'agents'))) {
      this.root = dir;
      this.agentsDir = join(dir, 'agents');
    } else {
      this.root = basename(dir) === 'agents' ? dirname(dir) : dir;
      this.agentsDir = dir;
    }
    this.location = this.agentsDir;
    this.#debounceMs = opts.debounceMs ?? 200;
  }

  async load(): Promise<LoadResult> {
    return loadFromReader(new FolderReader(this.root, this.agentsDir));
  }

  watch(onChange: () => void): () => void {
    let timer: NodeJS.Timeout | undefined;
    const watchers = new Map<string, FSWatcher>();
    const fire = (): void => {
      arm(); // a skills/ or prompts/ folder created since start gets its own watcher
      clearTimeout(timer);
      timer = setTimeout(onChange, this.#debounceMs);
    };
    const watchDir = (dir: string, recursive: boolean): void => {
      if (watchers.has(dir) || !existsSync(dir)) return;
      try {
        // Recursive watching is native on Linux since Node 20; an error (folder removed) ends that watcher.
        const w = fsWatch(dir, { recursive }, fire);
        w.on('error', () => {
          w.close();
          watchers.delete(dir);
        });
        watchers.set(dir, w);
      } catch {
        // An unwatchable folder still reloads on `warren reload` and SIGHUP.
      }
    };
    const arm = (): void => {
      watchDir(this.agentsDir, true);
      if (this.root === this.agentsDir) return;
      watchDir(join(this.root, 'skills'), true);
      watchDir(join(this.root, 'prompts'), true);
      // The root itself, shallowly: only to notice skills/ or prompts/ appearing (never a deep watch of a
      // root that might be a whole repository).
      watchDir(this.root, false);
    };
    arm();
    return () => {
      clearTimeout(timer);
      for (const w of watchers.values()) w.close();
      watchers.clear();
    };
  }
}

/** Maps layout keys onto the folder; `agents/` may be the store root's subfolder or a folder given directly. */
class FolderReader implements StoreReader {
  readonly #root: string;
  readonly #agentsDir: string;

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
    return keys;
  }

  // Synchronous on purpose: a definition is a few hundred bytes, and the thread-pool round trips of an async
  // read (open, stat, read, close) cost about seven times the read itself (100,000 agents: ~6 s of a load).
  // loadFromReader gives the event loop a turn between batches.
  read(key: string): Promise<string | undefined> {
    return Promise.resolve(readIfExists(this.displayName(key)));
  }

  displayName(key: string): string {
    return key.startsWith('agents/') ? join(this.#agentsDir, key.slice('agents/'.length)) : join(this.#root, key);
  }
}

/** The file's text; undefined when it does not exist (or is a folder). Other errors are thrown. */
function readIfExists(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'EISDIR') return undefined;
    throw err;
  }
}

async function subfolders(dir: string): Promise<string[]> {
  return (await readdir(dir, { withFileTypes: true })).filter((e) => e.isDirectory()).map((e) => e.name);
}
