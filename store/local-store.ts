// Agent definitions from a local folder: <root>/agents/<name>/config.yaml and system-prompt.md.
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import type { DefinitionStore, LoadResult } from './definition.ts';
import { parseDefinition } from './parse-definition.ts';

export class LocalFolderStore implements DefinitionStore {
  readonly location: string;
  readonly agentsDir: string;
  /** The store root, which holds `agents/` (and later `skills/`, `prompts/`). */
  readonly root: string;

  /** Accepts the store root (holding `agents/`) or the `agents` folder itself. */
  constructor(dir: string) {
    if (existsSync(join(dir, 'agents'))) {
      this.root = dir;
      this.agentsDir = join(dir, 'agents');
    } else {
      this.root = basename(dir) === 'agents' ? dirname(dir) : dir;
      this.agentsDir = dir;
    }
    this.location = this.agentsDir;
  }

  async load(): Promise<LoadResult> {
    const result: LoadResult = { agents: [], problems: [] };
    let entries;
    try {
      entries = await readdir(this.agentsDir, { withFileTypes: true });
    } catch (err) {
      result.problems.push({ file: this.agentsDir, message: `cannot read agents folder: ${(err as Error).message}`, severity: 'error' });
      return result;
    }
    const folders = entries.filter((e) => e.isDirectory()).map((e) => e.name).sort();
    for (const folder of folders) {
      const configFile = join(this.agentsDir, folder, 'config.yaml');
      const promptFile = join(this.agentsDir, folder, 'system-prompt.md');
      const configText = await readOptional(configFile);
      if (configText === undefined) continue; // no config.yaml: not an agent folder
      const { definition, problems } = parseDefinition({ folder, configFile, configText, promptFile, promptText: await readOptional(promptFile) });
      result.problems.push(...problems);
      if (definition) result.agents.push(definition);
    }
    return result;
  }
}

async function readOptional(file: string): Promise<string | undefined> {
  try {
    return await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}
