// Who is calling an A2A agent: each configured caller (`a2a.callers`) by its bearer key, kept only as a SHA-256 hash
// once read (never in Redis, never logged); with no callers configured, a loopback caller needs no key and is named
// `loopback`, and nothing else is served.
import { createHash, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { isLoopback } from '../../local-hub/watch/access.ts';
import type { WarrenConfig } from '../../services/config.ts';

export interface KnownCaller {
  name: string;
  keyHash: Buffer;
}

/** Who asked, or why the request is refused. */
export type CallerCheck = { ok: true; caller: string } | { ok: false; reason: string };

/** The name a keyless loopback caller goes by. */
export const LOOPBACK_CALLER = 'loopback';

export function hashKey(key: string): Buffer {
  return createHash('sha256').update(key, 'utf8').digest();
}

/** The request's caller (pure): a configured caller by its key; with none configured, a loopback address. */
export function checkCaller(callers: readonly KnownCaller[], authorization: string | undefined, remoteAddress: string | undefined): CallerCheck {
  if (callers.length === 0) return isLoopback(remoteAddress) ? { ok: true, caller: LOOPBACK_CALLER } : { ok: false, reason: 'no a2a.callers are configured, so only this machine may call' };
  const m = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '');
  if (!m) return { ok: false, reason: 'expected an Authorization: Bearer <key> header' };
  const hash = hashKey(m[1]!);
  const found = callers.find((c) => timingSafeEqual(c.keyHash, hash));
  return found ? { ok: true, caller: found.name } : { ok: false, reason: 'the bearer key is not one of a2a.callers' };
}

/** A configured caller whose key cannot be had. */
export class CallerKeyMissing extends Error {
  override readonly name = 'CallerKeyMissing';
  readonly caller: string;
  constructor(caller: string, where: string) {
    super(`a2a.callers ${caller}: ${where}`);
    this.caller = caller;
  }
}

/** The configured callers with their keys read and hashed; a key that cannot be read is a CallerKeyMissing. */
export function loadCallers(config: WarrenConfig['a2a'], secret: (name: string) => string | undefined): KnownCaller[] {
  return config.callers.map((c) => {
    let key: string | undefined;
    if (c.key_env !== undefined) {
      key = secret(c.key_env);
      if (!key) throw new CallerKeyMissing(c.name, `key_env ${c.key_env} is not set (nor in secrets.dir)`);
    } else {
      try {
        key = readFileSync(c.key_file!, 'utf8').trim();
      } catch (err) {
        throw new CallerKeyMissing(c.name, `key_file ${c.key_file} cannot be read (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
      }
      if (!key) throw new CallerKeyMissing(c.name, `key_file ${c.key_file} is empty`);
    }
    return { name: c.name, keyHash: hashKey(key) };
  });
}
