// Where Redis is and how warren authenticates to it, as ioredis options: the one reading of `redis.url` (or
// REDIS_URL), `redis.username` and the password warren.yaml names, and `redis.tls`. Every connection warren opens
// (daemon, BullMQ, the ops commands, doctor) is built from these, so they all log in the same way.
import type { RedisOptions } from 'ioredis';

/** `redis.tls`: files the client presents or trusts, as warren.yaml names them (read when a connection is made). */
export interface RedisTlsFiles {
  ca_file?: string | undefined;
  cert_file?: string | undefined;
  key_file?: string | undefined;
  servername?: string | undefined;
  reject_unauthorized?: boolean | undefined;
}

/**
 * Where Redis is: warren.yaml's `redis` (a URL alone is a single Redis). `password` is the value read from
 * `redis.password_env` / `redis.password_file` at start, never written in warren.yaml.
 */
export type RedisTarget =
  | string
  | {
      url: string;
      cluster?: readonly string[] | undefined;
      username?: string | undefined;
      password?: string | undefined;
      tls?: RedisTlsFiles | undefined;
    };

/** A Redis URL warren cannot use; names what is wrong with it. */
export class RedisUrlError extends Error {
  override readonly name = 'RedisUrlError';
  constructor(url: string, reason: string) {
    super(`redis.url ${redactedUrl(url)}: ${reason} (expected redis://[user:password@]host[:port][/db], rediss://… for TLS, or unix:///path/to/redis.sock)`);
  }
}

/** Where one Redis listens, and the credentials the URL carries. */
export interface RedisEndpoint {
  /** A Unix socket (`unix:///run/redis/redis.sock`); otherwise host and port. */
  path?: string;
  host?: string;
  port?: number;
  db?: number;
  username?: string;
  password?: string;
  /** `rediss://`: TLS even without `redis.tls`. */
  tls: boolean;
}

/** Reads one Redis URL: `redis://`, `rediss://` or `unix://` (a socket path; credentials then come from redis.password_*). */
export function parseRedisUrl(url: string): RedisEndpoint {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new RedisUrlError(url, 'not a URL');
  }
  const creds = {
    ...(u.username ? { username: decodeURIComponent(u.username) } : {}),
    ...(u.password ? { password: decodeURIComponent(u.password) } : {}),
  };
  const db = u.searchParams.get('db') ?? (u.protocol === 'unix:' ? '' : u.pathname.replace(/^\//, ''));
  if (db && !/^\d+$/.test(db)) throw new RedisUrlError(url, `database "${db}" is not a number`);
  const dbPart = db ? { db: Number(db) } : {};
  if (u.protocol === 'unix:') {
    if (u.hostname) throw new RedisUrlError(url, 'a socket URL has no host: write three slashes, unix:///path/to/redis.sock');
    if (!u.pathname || u.pathname === '/') throw new RedisUrlError(url, 'no socket path');
    return { path: decodeURIComponent(u.pathname), ...dbPart, ...creds, tls: false };
  }
  if (u.protocol !== 'redis:' && u.protocol !== 'rediss:') throw new RedisUrlError(url, `unknown scheme ${u.protocol}`);
  return { host: u.hostname.replace(/^\[(.*)\]$/, '$1') || '127.0.0.1', port: Number(u.port || 6379), ...dbPart, ...creds, tls: u.protocol === 'rediss:' };
}

/** TLS options for ioredis from `redis.tls`, file contents read by `read`. Undefined: no TLS. */
export function tlsOptionsOf(files: RedisTlsFiles | undefined, urlAsksTls: boolean, read: (path: string) => string): RedisOptions['tls'] {
  if (!files && !urlAsksTls) return undefined;
  const f = files ?? {};
  return {
    ...(f.ca_file ? { ca: read(f.ca_file) } : {}),
    ...(f.cert_file ? { cert: read(f.cert_file) } : {}),
    ...(f.key_file ? { key: read(f.key_file) } : {}),
    ...(f.servername ? { servername: f.servername } : {}),
    ...(f.reject_unauthorized === false ? { rejectUnauthorized: false } : {}),
  };
}

/**
 * The ioredis options of one endpoint: where it is, the credentials (the URL's, else the configured ones) and TLS.
 * `withCredentials: false` leaves the credentials out: the start check (redis/open-access.ts) asks whether Redis
 * answers a client that has none, as an agent's user would be.
 */
export function endpointOptions(target: RedisTarget, url: string, read: (path: string) => string, withCredentials = true): RedisOptions {
  const ep = parseRedisUrl(url);
  const conf: Exclude<RedisTarget, string> | undefined = typeof target === 'string' ? undefined : target;
  const where: RedisOptions = ep.path !== undefined ? { path: ep.path } : { host: ep.host, port: ep.port };
  const username = ep.username ?? conf?.username;
  const password = ep.password ?? conf?.password;
  const tls = tlsOptionsOf(conf?.tls, ep.tls, read);
  return {
    ...where,
    ...(ep.db !== undefined ? { db: ep.db } : {}),
    ...(withCredentials && username !== undefined ? { username } : {}),
    ...(withCredentials && password !== undefined ? { password } : {}),
    ...(tls ? { tls } : {}),
  };
}

/** A Redis URL may hold a password; logs get it without. */
export function redactedUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return '<invalid url>';
  }
}
