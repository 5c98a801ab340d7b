// The Redis password, read once at start from where warren.yaml says it is (`redis.password_env`: a variable, its
// NAME_FILE or secrets.dir; `redis.password_file`: a file), never from warren.yaml itself. A password inside
// warren.yaml's `redis.url` is refused unless the file is readable by its owner only: warren.yaml is read by
// people and tools that have no business with the password, and CLI agents' users must not find it there.
import { readFileSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseRedisUrl, RedisUrlError } from '../redis/connection-options.ts';
import { DefinitionError } from '../store/problems.ts';
import { SecretSource } from './secrets.ts';

/** The part of warren.yaml's `redis` these decisions read and fill. */
interface RedisSection {
  url: string;
  cluster?: readonly string[] | undefined;
  username?: string | undefined;
  password_env?: string | undefined;
  password_file?: string | undefined;
  password: string | undefined;
  tls?: { ca_file?: string | undefined; cert_file?: string | undefined; key_file?: string | undefined } | undefined;
}

/** Why a URL password in warren.yaml is refused, or undefined when it may stay (none, or the file is owner-only). */
export function inlineCredentialsProblem(fileMode: number, urls: readonly string[]): string | undefined {
  const withPassword = urls.some((u) => {
    try {
      return parseRedisUrl(u).password !== undefined;
    } catch {
      return false; // a bad URL is reported when it is used
    }
  });
  if (!withPassword || (fileMode & 0o077) === 0) return undefined;
  return `holds a Redis password but the file is readable by others (mode ${(fileMode & 0o777).toString(8)}): chmod 600 it, or move the password out (REDIS_URL in the daemon's environment, redis.password_env or redis.password_file)`;
}

/** Throws a DefinitionError naming redis.url when warren.yaml carries a password others can read. */
export function refuseReadableInlineCredentials(file: string | undefined, redis: Pick<RedisSection, 'url' | 'cluster'>): void {
  if (!file) return;
  let mode: number;
  try {
    mode = statSync(file).mode;
  } catch {
    return; // no file: the defaults hold no password
  }
  const problem = inlineCredentialsProblem(mode, [redis.url, ...(redis.cluster ?? [])]);
  if (problem) throw new DefinitionError([{ file, message: `redis.url ${problem}`, severity: 'error' }]);
}

/**
 * Fills `redis.password` from `redis.password_env` or `redis.password_file` and makes the configured files absolute
 * (relative to warren.yaml). A password named but not found, or given twice, is an error naming the key.
 */
export function resolveRedisCredentials(config: { redis: RedisSection; secrets: { dir?: string | undefined } }, base: string, env: NodeJS.ProcessEnv): void {
  const r = config.redis;
  const fail = (key: string, message: string): never => {
    throw new Error(`redis.${key}: ${message}`);
  };
  if (r.password_file !== undefined) r.password_file = resolve(base, r.password_file);
  if (r.tls) for (const k of ['ca_file', 'cert_file', 'key_file'] as const) if (r.tls[k] !== undefined) r.tls[k] = resolve(base, r.tls[k]);
  for (const url of [r.url, ...(r.cluster ?? [])]) {
    try {
      parseRedisUrl(url);
    } catch (err) {
      if (err instanceof RedisUrlError) fail(r.cluster ? 'cluster' : 'url', err.message);
      throw err;
    }
  }
  if (r.password_env !== undefined && r.password_file !== undefined) fail('password_env', 'set password_env or password_file, not both');
  if (r.password_env !== undefined) {
    const secrets = new SecretSource({ env, dir: config.secrets.dir });
    r.password = secrets.get(r.password_env) ?? fail('password_env', secrets.whyMissing(r.password_env) ?? `names ${r.password_env}, which is not set (export it, or ${r.password_env}_FILE naming a file that holds it)`);
  }
  if (r.password_file !== undefined) {
    let text: string;
    try {
      text = readFileSync(r.password_file, 'utf8');
    } catch (err) {
      return fail('password_file', `${r.password_file} cannot be read (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
    }
    // Files written with `echo` end in a newline that is no part of the password.
    r.password = text.replace(/\s+$/, '') || fail('password_file', `${r.password_file} is empty`);
  }
  if (r.password !== undefined && parseRedisUrl(r.cluster?.[0] ?? r.url).password !== undefined) fail(r.password_env !== undefined ? 'password_env' : 'password_file', 'the Redis URL holds a password too: give it in one place');
}
