// Redis connections as BullMQ wants them: workers block (no per-request retry limit), producers fail fast.
import { Redis } from 'ioredis';
import type { Logger } from 'pino';

export function connectRedis(url: string, role: 'worker' | 'producer', logger: Logger): Redis {
  const conn = new Redis(url, {
    maxRetriesPerRequest: role === 'worker' ? null : 1,
    // Keep reconnecting with a capped delay: a Redis restart must not need a daemon restart.
    retryStrategy: (times) => Math.min(times * 200, 5_000),
    lazyConnect: false,
  });
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
 * Closes a connection within `boundMs`: QUIT when Redis answers, so replies in flight still arrive; a plain
 * disconnect when it does not, or when QUIT takes too long. QUIT on a lost connection waits for a reconnect
 * that may never come, which is how a daemon with its Redis gone used to hang at shutdown.
 */
export async function closeRedis(conn: Redis, boundMs = 1_000): Promise<void> {
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

/** Fails with a clear message instead of hanging when Redis is not there at start. */
export async function assertRedisReachable(conn: Redis, url: string, timeoutMs = 5_000): Promise<void> {
  const timeout = new Promise<never>((_, reject) => {
    setTimeout(() => reject(new Error(`cannot reach Redis at ${redactUrl(url)} within ${timeoutMs} ms (set REDIS_URL or redis.url in warren.yaml)`)), timeoutMs).unref();
  });
  await Promise.race([conn.ping(), timeout]);
}

/** A Redis URL may hold a password; logs get it without. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return '<invalid url>';
  }
}
