// The operator's pauses, kept where they outlive Redis: a small JSON file (warren.yaml `pauses.file`, default
// ./data/pauses.json), mode 0600, replaced atomically (written beside, then renamed). `warren pause|resume` and the
// watch page write it first and Redis second; the daemon copies it into Redis at start and whenever its Redis
// connection is ready again, so a Redis restarted empty does not quietly resume a paused agent.
import { chmod, mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { z } from 'zod';

const PauseFileSchema = z.strictObject({
  version: z.literal(1),
  /** Agent name → when it was paused (ISO time). */
  paused: z.record(z.string().min(1), z.strictObject({ at: z.string() })),
});

export type PausedAgents = z.infer<typeof PauseFileSchema>['paused'];

/** The pause file exists but cannot be read as one: the daemon would otherwise forget what an operator decided. */
export class PauseFileError extends Error {
  override readonly name = 'PauseFileError';
  readonly file: string;
  constructor(file: string, detail: string, opts?: { cause?: unknown }) {
    super(`the pause file ${file} is unreadable: ${detail} (fix or remove it; \`warren pause <agent>\` writes it anew)`, opts);
    this.file = file;
  }
}

export class PauseFile {
  readonly path: string;
  /** One change at a time within a process: two pauses in a row must both land. */
  #queue: Promise<unknown> = Promise.resolve();

  constructor(path: string) {
    this.path = path;
  }

  /** The paused agents; none when the file does not exist yet. */
  async read(): Promise<PausedAgents> {
    let text: string;
    try {
      text = await readFile(this.path, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return {};
      throw new PauseFileError(this.path, (err as Error).message, { cause: err });
    }
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (err) {
      throw new PauseFileError(this.path, 'not JSON', { cause: err });
    }
    const parsed = PauseFileSchema.safeParse(json);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new PauseFileError(this.path, `${issue?.path.join('.') || 'the file'}: ${issue?.message ?? 'invalid'}`);
    }
    return parsed.data.paused;
  }

  /** Records `agent` as paused (or not), atomically; the file is created, with its folder, when missing. */
  set(agent: string, paused: boolean, now = new Date()): Promise<void> {
    const next = this.#queue.then(async () => {
      const all = { ...(await this.read()) };
      if (paused) all[agent] ??= { at: now.toISOString() };
      else delete all[agent];
      await mkdir(dirname(this.path), { recursive: true, mode: 0o700 });
      const tmp = `${this.path}.${process.pid}.tmp`;
      await writeFile(tmp, `${JSON.stringify({ version: 1, paused: all }, null, 2)}\n`, { mode: 0o600 });
      await chmod(tmp, 0o600); // an umask or an existing file may have left it wider
      await rename(tmp, this.path);
    });
    this.#queue = next.catch(() => undefined);
    return next;
  }
}
