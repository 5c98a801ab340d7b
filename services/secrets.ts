// Where the daemon's secrets come from: a variable of its environment, or a file. `<NAME>_FILE` names the file
// holding NAME (the container-secrets convention); `secrets.dir` holds a file per variable name. A secret in a
// file is not in the daemon's environment, which any process of the daemon's user reads in /proc/<pid>/environ.
// Values are read at start, before anything is logged (the redactor must know them), and again at each definitions
// reload (`reread`, `warren reload`): a new agent's key dropped into `secrets.dir` runs without a restart. The
// environment itself is the process's and stays as it started. Every `*_FILE` variable is read (an agent's key
// may hide under any name), but only a name the daemon asks for must have its file (see whyMissing):
// TF_CLI_CONFIG_FILE and the like are other programs' business.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** A file larger than this is no secret (a CA bundle named by SSL_CERT_FILE, say) and is not read. */
const MAX_SECRET_BYTES = 64 * 1024;
const VAR_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

export class SecretFileError extends Error {
  readonly path: string;
  constructor(path: string, reason: string) {
    super(`secret file ${path}: ${reason}`);
    this.name = 'SecretFileError';
    this.path = path;
  }
}

export interface SecretSourceOptions {
  env: Readonly<Record<string, string | undefined>>;
  /** `secrets.dir`: a file per variable name. */
  dir?: string;
}

export class SecretSource {
  readonly #env: Readonly<Record<string, string | undefined>>;
  /** name → value and the file it came from. */
  #fromFiles = new Map<string, { value: string; path: string }>();
  /** Files known to hold secrets: all of the folder's, and a `_FILE`'s once its name is asked for. */
  readonly #secretPaths = new Set<string>();
  readonly #dir: string | undefined;

  constructor(opts: SecretSourceOptions) {
    this.#env = opts.env;
    this.#dir = opts.dir;
    this.reread();
  }

  /**
   * Reads the secret files again (the folder's and every `_FILE`'s): a file added since shows up, a changed one
   * gives its new value, a removed one is gone. A folder that cannot be read throws SecretFileError and changes
   * nothing, so a reload keeps the secrets it had.
   */
  reread(): void {
    const fromFiles = new Map<string, { value: string; path: string }>();
    if (this.#dir !== undefined) {
      let names: string[];
      try {
        names = readdirSync(this.#dir);
      } catch (err) {
        throw new SecretFileError(this.#dir, `secrets.dir cannot be read (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
      }
      for (const name of names) if (VAR_NAME.test(name) && load(fromFiles, name, join(this.#dir, name))) this.#secretPaths.add(join(this.#dir, name));
    }
    // `_FILE` wins over the folder: it is the more specific of the two.
    for (const [fileVar, path] of Object.entries(this.#env)) {
      const name = fileVar.endsWith('_FILE') ? fileVar.slice(0, -'_FILE'.length) : '';
      if (name && path && !this.#env[name]) load(fromFiles, name, path);
    }
    this.#fromFiles = fromFiles;
  }

  /** The secret held by variable `name`: the environment first (an empty variable counts as unset), then its file. */
  get(name: string): string | undefined {
    if (this.#env[name]) return this.#env[name];
    const file = this.#fromFiles.get(name);
    if (file) {
      this.#secretPaths.add(file.path);
      return file.value;
    }
    return undefined;
  }

  /** Why `name` has no value though a file was named for it, for error messages; undefined otherwise. */
  whyMissing(name: string): string | undefined {
    const named = this.#env[`${name}_FILE`];
    if (this.get(name) !== undefined || !named) return undefined;
    return `${name}_FILE names ${named}, which is missing, unreadable, empty or larger than ${MAX_SECRET_BYTES} bytes`;
  }

  /** Every value read from a file (for the redactor: these names may say nothing of secrets). */
  fileValues(): string[] {
    return [...new Set([...this.#fromFiles.values()].map((f) => f.value))];
  }

  /** The secrets folder and the files of the secrets asked for so far; none may be readable by CLI agents. */
  paths(): string[] {
    return [...(this.#dir === undefined ? [] : [this.#dir]), ...this.#secretPaths];
  }
}

/** Reads one secret file into `into`; whether a value was read. */
function load(into: Map<string, { value: string; path: string }>, name: string, path: string): boolean {
  try {
    const st = statSync(path);
    if (!st.isFile() || st.size > MAX_SECRET_BYTES) return false;
    // Files written with `echo` end in a newline that is no part of the secret.
    const value = readFileSync(path, 'utf8').replace(/\s+$/, '');
    if (value) into.set(name, { value, path });
    return Boolean(value);
  } catch {
    return false; // unreadable: get() says so if this name is ever asked for
  }
}
