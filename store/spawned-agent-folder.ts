// Where an approved proposal becomes an agent (README "Agents that propose agents"): a folder of its own in the
// store's agents folder (`store.path`, the operator's, git-ignored), with the proposal's config.yaml and
// system-prompt.md. The folder is written beside the agents folder first and renamed into it, so a reload never
// reads half an agent; a folder of that name already there is never overwritten.
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';

export type SpawnWrite = 'written' | 'same' | 'taken';

export class SpawnedAgentFolder {
  /** The agents folder new agents are written to. */
  readonly agentsDir: string;

  constructor(agentsDir: string) {
    this.agentsDir = agentsDir;
  }

  exists(name: string): boolean {
    return existsSync(join(this.agentsDir, name));
  }

  /**
   * Writes the agent's folder: `written` now, `same` when a folder with these very files is there (an earlier
   * attempt that was not recorded as done), `taken` when another agent's folder has the name.
   */
  async write(name: string, configText: string, promptText: string): Promise<SpawnWrite> {
    const target = join(this.agentsDir, name);
    if (existsSync(target)) return (await sameFiles(target, configText, promptText)) ? 'same' : 'taken';
    await mkdir(this.agentsDir, { recursive: true });
    // Beside the agents folder (same file system, so the rename is atomic), never inside it: a half-written
    // folder there would be read as an agent.
    const tmp = await mkdtemp(join(dirname(this.agentsDir), '.warren-spawn-'));
    try {
      await writeFile(join(tmp, 'config.yaml'), configText);
      await writeFile(join(tmp, 'system-prompt.md'), promptText);
      try {
        await rename(tmp, target);
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        if (code === 'ENOTEMPTY' || code === 'EEXIST') return (await sameFiles(target, configText, promptText)) ? 'same' : 'taken';
        throw err;
      }
      return 'written';
    } finally {
      await rm(tmp, { recursive: true, force: true });
    }
  }
}

async function sameFiles(dir: string, configText: string, promptText: string): Promise<boolean> {
  const read = (f: string) => readFile(join(dir, f), 'utf8').catch(() => undefined);
  return (await read('config.yaml')) === configText && (await read('system-prompt.md')) === promptText;
}
