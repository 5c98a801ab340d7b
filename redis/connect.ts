// Redis connections as BullMQ wants them: workers block (no per-request retry limit), producers fail fast.
// One Redis (`redis.url`) or a Redis Cluster (`redis.cluster`: some of its nodes; ioredis finds the rest).
import { readFileSync } from 'node:fs';
import { Cluster, Redis, type ClusterOptions, type RedisOptions } from 'ioredis';
import { pino, type Logger } from 'pino';
import { endpointOptions, redactedUrl, type RedisTarget } from './connection-options.ts';
import type { RedisClient } from './scripts.ts';

export type { RedisTarget } from './connection-options.ts';

/** Keep reconnecting with a capped delay: a Redis restart must not need a daemon restart. */
const reconnectDelay = (times: number): number => Math.min(times * 200, 5_000);

const readTlsFile = (path: string): string => readFileSync(path, 'utf8');

/**
 * The one place that decides between a single Redis and a cluster: `node` applies to each connection, `cluster` to
 * the whole. Credentials and TLS come from the URL or warren.yaml (redis/connection-options.ts); on a cluster from the
 * first node's URL, for every node. `withCredentials: false` is the start check's client that has none.
 */
function openClient(target: RedisTarget, node: RedisOptions, cluster: ClusterOptions, withCredentials = true): RedisClient {
  const nodes = typeof target === 'string' ? undefined : target.cluster;
  if (!nodes) return new Redis({ ...endpointOptions(target, typeof target === 'string' ? target : target.url, readTlsFile, withCredentials), ...node });
  const seeds = nodes.map((u) => endpointOptions(target, u, readTlsFile, withCredentials));
  const { host: _h, port: _p, path: _s, db: _d, ...auth } = seeds[0]!;
  return new Cluster(seeds.map((s) => ({ host: s.host!, port: s.port! })), { ...cluster, redisOptions: { ...auth, ...node } });
}

export function connectRedis(target: RedisTarget, role: 'worker' | 'producer', logger: Logger): RedisClient {
  const conn = openClient(target, { maxRetriesPerRequest: role === 'worker' ? null : 1, retryStrategy: reconnectDelay, lazyConnect: false }, { clusterRetryStrategy: reconnectDelay, lazyConnect: false });
  let reported = false;
  conn.on('error', (err: Error) => {
    // ioredis repeats the same error on every reconnect attempt; say it once per outage.
    if (!reported) logger.warn({ err: err.message, role }, 'redis connection error; reconnecting');
    reported = true;
  });
  conn.on('ready', () => {
    if (reported) logger.info({ role }, 'redis connection restored');
    reported = false;
  });
  return conn;
}

/**
 * A connection tried once, for a run by hand (`warren run`): no reconnects, no offline queue, so a Redis that is not
 * there fails at once (with ioredis's reason) instead of being waited for.
 */
export async function connectOnce(target: RedisTarget, connectTimeout: number): Promise<RedisClient> {
  const conn = openClient(
    target,
    { lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 0, retryStrategy: () => null, connectTimeout },
    { lazyConnect: true, enableOfflineQueue: false, clusterRetryStrategy: () => null },
  );
  conn.on('error', () => undefined); // the caller reports the failed connect
  try {
    await conn.connect();
  } catch (err) {
    conn.disconnect();
    throw err;
  }
  return conn;
}

/**
 * Closes a connection within `boundMs`: QUIT when Redis answers, so replies in flight still arrive; a plain
 * disconnect when it does not, or when QUIT takes too long. QUIT on a lost connection waits for a reconnect
 * that may never come, which is how a daemon with its Redis gone used to hang at shutdown.
 */
export async function closeRedis(conn: RedisClient, boundMs = 1_000): Promise<void> {
  if (conn.status === 'end') return;
  if (conn.status === 'ready') {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), boundMs);
    });
    const quit = conn.quit().then(
      () => true,
      () => false,
    );
    const quitted = await Promise.race([quit, late]);
    clearTimeout(timer);
    if (quitted) return;
  }
  conn.disconnect();
}

/** Redis did not answer: says where it was looked for and how to get one, since a first run often has none. */
export class RedisUnreachableError extends Error {
  /** What went wrong, in a few words (`connect ECONNREFUSED 127.0.0.1:6379`). */
  readonly reason: string;
  constructor(target: RedisTarget, reason: string) {
    super(
      `cannot reach Redis at ${describeRedis(target)} (${reason}). Start one (\`docker run -d -p 6379:6379 redis:7\`, or redis-server from your package manager: \`apt install redis-server\`, \`brew install redis\`), or set REDIS_URL or redis.url in warren.yaml to yours`,
    );
    this.name = 'RedisUnreachableError';
    this.reason = reason;
  }
}

/**
 * Fails with a RedisUnreachableError instead of hanging, or ending on ioredis's retry-limit message, when Redis
 * does not answer a PING within `timeoutMs`. The error names the connection's own failure (refused, unknown host).
 */
export async function assertRedisReachable(conn: RedisClient, target: RedisTarget, timeoutMs = 5_000): Promise<void> {
  let lastError: string | undefined;
  const onError = (err: Error): void => {
    lastError = err.message;
  };
  conn.on('error', onError);
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    await Promise.race([conn.ping(), timeout]);
  } catch (err) {
    throw new RedisUnreachableError(target, lastError ?? (err instanceof Error ? err.message : String(err)));
  } finally {
    clearTimeout(timer);
    conn.off('error', onError);
  }
}

/** A connection for a one-off command (status, reload, pause): checked at once, closed again when Redis is not there. */
export async function openCheckedRedis(target: RedisTarget, timeoutMs = 3_000): Promise<RedisClient> {
  const conn = connectRedis(target, 'producer', pino({ level: 'silent' }));
  try {
    await assertRedisReachable(conn, target, timeoutMs);
  } catch (err) {
    conn.disconnect();
    throw err;
  }
  return conn;
}

/** What Redis answers a client without credentials: a PING answered, refused (NOAUTH), or no answer at all. */
export type CredentiallessAnswer = { kind: 'answers' } | { kind: 'refuses'; reply: string } | { kind: 'unreachable'; reason: string };

/**
 * Asks Redis, as a client holding none of warren's credentials (as an agent's user would be), for a PING: Redis
 * without requirepass or ACLs answers it. On a cluster each listed node is asked; any that answers counts.
 */
export async function pingWithoutCredentials(target: RedisTarget, timeoutMs = 3_000): Promise<CredentiallessAnswer> {
  const urls = typeof target === 'string' ? [target] : (target.cluster ?? [target.url]);
  let last: CredentiallessAnswer = { kind: 'unreachable', reason: 'no node listed' };
  for (const url of urls) {
    // A plain connection to the node even on a cluster: a cluster client would stop at CLUSTER SLOTS.
    const conn = new Redis({ ...endpointOptions(typeof target === 'string' ? target : { ...target, cluster: undefined }, url, readTlsFile, false), lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 0, retryStrategy: () => null, connectTimeout: timeoutMs });
    let lastError: string | undefined;
    conn.on('error', (err: Error) => (lastError = err.message));
    try {
      await conn.connect();
      await conn.ping();
      return { kind: 'answers' };
    } catch (err) {
      // ioredis's ready check may meet the NOAUTH first: then it is the connection's error, not the PING's.
      const message = [err instanceof Error ? err.message : String(err), lastError].find((m) => m !== undefined && /NOAUTH|WRONGPASS|NOPERM|Authentication required/i.test(m));
      if (message !== undefined) last = { kind: 'refuses', reply: message };
      else if (last.kind === 'unreachable') last = { kind: 'unreachable', reason: lastError ?? (err instanceof Error ? err.message : String(err)) };
    } finally {
      conn.disconnect();
    }
  }
  return last;
}

/** Where Redis is, for logs and messages: the URL, or `cluster <node>,…`, without passwords. */
export function describeRedis(target: RedisTarget): string {
  if (typeof target === 'string') return redactedUrl(target);
  return target.cluster ? `cluster ${target.cluster.map(redactedUrl).join(',')}` : redactedUrl(target.url);
}
