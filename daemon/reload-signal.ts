// `warren reload` reaches every daemon on the same Redis through pub/sub on `<prefix>:reload`: no pidfile to
// go stale, and it works across machines and containers. SIGHUP does the same for the local process.
import { RedisKeys } from '../scheduler/redis-keys.ts';
import type { RedisClient } from '../scheduler/redis-scripts.ts';

/** Publishes a reload request; resolves with how many daemons received it. */
export async function publishReload(conn: RedisClient, prefix: string): Promise<number> {
  return conn.publish(new RedisKeys(prefix).reloadChannel, JSON.stringify({ at: new Date().toISOString() }));
}

/**
 * Subscribes, on a connection dedicated to it (a subscribed connection can do nothing else); closing that
 * connection ends the subscription, so there is no separate unsubscribe to wait for at shutdown.
 */
export async function subscribeReload(conn: RedisClient, prefix: string, onReload: () => void): Promise<void> {
  const channel = new RedisKeys(prefix).reloadChannel;
  conn.on('message', (ch: string) => {
    if (ch === channel) onReload();
  });
  await conn.subscribe(channel);
}
