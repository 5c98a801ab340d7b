// Is this the hub's admin key? `warren approvals approve|deny` decides as "admin" (approvals.approvers), so having
// some value in the variable is not enough: the key is checked before anything is decided.
//
// The hub is asked first: it is what the key belongs to (`GET /api/v1/agents?limit=1` with `X-Admin-Key`, a read that
// answers 403 to anything but the admin key). The command must also work with no daemon and no hub running (an
// embedded hub stops with its daemon, and pending approvals outlive both), so every daemon records at start a
// salted scrypt digest of the admin key it runs with, under the home prefix; with the hub silent the command
// compares against that. Neither → refused: a key nobody can check decides nothing.
import { randomBytes, scrypt as scryptCb, timingSafeEqual } from 'node:crypto';
import { promisify } from 'node:util';
import type { RedisKeys } from '../redis/keys.ts';

const scrypt = promisify(scryptCb) as (key: string, salt: Buffer, len: number, opts: { N: number; r: number; p: number; maxmem: number }) => Promise<Buffer>;

/** What the hub said of the key: it took it, it refused it, or it gave no answer about it (down, another kind of hub). */
export type HubAnswer = { kind: 'accepted' } | { kind: 'refused'; status: number } | { kind: 'silent'; why: string };

/** The key against the digest the daemons recorded: the same, another, or nothing recorded on this Redis. */
export type RecordAnswer = 'match' | 'mismatch' | 'none';

export type AdminKeyVerdict = { ok: true; by: 'hub' | 'record' } | { ok: false; message: string };

/**
 * Whether the key may decide (pure). The hub's yes or no wins; when it gave no answer, the daemons' record decides;
 * with neither, the key is refused because it cannot be checked.
 */
export function adminKeyVerdict(hub: HubAnswer, record: RecordAnswer, what: { hubUrl: string; source: string }): AdminKeyVerdict {
  if (hub.kind === 'accepted') return { ok: true, by: 'hub' };
  if (hub.kind === 'refused') return { ok: false, message: `the admin key ${what.source} is wrong: the hub at ${what.hubUrl} refused it (${hub.status})` };
  if (record === 'match') return { ok: true, by: 'record' };
  if (record === 'mismatch') return { ok: false, message: `the admin key ${what.source} is wrong: it is not the key the daemons on this Redis run with (the hub at ${what.hubUrl} gave no answer: ${hub.why})` };
  return { ok: false, message: `cannot check the admin key ${what.source}: the hub at ${what.hubUrl} gave no answer (${hub.why}) and no daemon has recorded its admin key on this Redis; start the hub or a daemon and try again` };
}

/** Asks the hub whether `key` is its admin key. A warren hub answers 200 to the admin key and 403 to any other value. */
export async function askHub(hubUrl: string, key: string, timeoutMs = 5_000): Promise<HubAnswer> {
  let res: Response;
  try {
    // As the hub client addresses it (hub-client/http.ts): the hub's origin and path, then /api/v1.
    const base = new URL(hubUrl);
    const url = new URL(`${base.pathname.replace(/\/+$/, '')}/api/v1/agents?limit=1`, base);
    res = await fetch(url, { headers: { 'x-admin-key': key, accept: 'application/json' }, signal: AbortSignal.timeout(timeoutMs) });
  } catch (err) {
    return { kind: 'silent', why: (err as Error).cause instanceof Error ? ((err as Error).cause as Error).message : (err as Error).message };
  }
  await res.body?.cancel().catch(() => undefined);
  if (res.ok) return { kind: 'accepted' };
  if (res.status === 401 || res.status === 403) return { kind: 'refused', status: res.status };
  return { kind: 'silent', why: `it answered ${res.status}` };
}

interface Recorded {
  salt: string;
  digest: string;
}

// scrypt's cost: about 50 ms once per daemon start and per decision; slow enough that a digest read out of Redis
// does not give up a short key to guessing.
const COST = { N: 16_384, r: 8, p: 1, maxmem: 64 * 1024 * 1024 };
const LEN = 32;

/** The two Redis calls the record needs. */
export interface RecordRedis {
  get(key: string): Promise<string | null>;
  set(key: string, value: string): Promise<unknown>;
}

/** Where the daemons' digest of the admin key lives: the fleet's home keys. */
export class AdminKeyRecord {
  readonly #redis: RecordRedis;
  readonly #key: string;

  constructor(redis: RecordRedis, home: RedisKeys) {
    this.#redis = redis;
    this.#key = home.adminKeyCheck;
  }

  /** Records `key` (a daemon at start); a record of the same key is left as it is. */
  async record(key: string): Promise<void> {
    if ((await this.compare(key)) === 'match') return;
    const salt = randomBytes(16);
    const digest = await scrypt(key, salt, LEN, COST);
    await this.#redis.set(this.#key, JSON.stringify({ salt: salt.toString('base64'), digest: digest.toString('base64') } satisfies Recorded));
  }

  /** `key` against the record, in constant time. */
  async compare(key: string): Promise<RecordAnswer> {
    const raw = await this.#redis.get(this.#key);
    const rec = raw === null ? undefined : parseRecord(raw);
    if (!rec) return 'none';
    const want = Buffer.from(rec.digest, 'base64');
    const got = await scrypt(key, Buffer.from(rec.salt, 'base64'), want.length || LEN, COST);
    return want.length === got.length && timingSafeEqual(want, got) ? 'match' : 'mismatch';
  }
}

function parseRecord(raw: string): Recorded | undefined {
  try {
    const v = JSON.parse(raw) as Partial<Recorded>;
    return typeof v.salt === 'string' && typeof v.digest === 'string' ? { salt: v.salt, digest: v.digest } : undefined;
  } catch {
    return undefined;
  }
}
