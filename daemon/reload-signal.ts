// `warren reload` reaches every daemon on the same Redis through pub/sub on `<prefix>:reload`: no pidfile to
// go stale, and it works across machines and containers. SIGHUP does the same for the local process.
import { Cluster } from 'ioredis';
import { RedisKeys } from '../redis/keys.ts';
import type { RedisClient } from '../redis/scripts.ts';

/** How many daemons heard it. */
export async function publishReload(conn: RedisClient, prefix: string): Promise<number> {
  const channel = new RedisKeys(prefix).reloadChannel;
  const heard = await conn.publish(channel, JSON.stringify({ at: new Date().toISOString() }));
  if (!(conn instanceof Cluster)) return heard;
  // A cluster passes the message to every node, but PUBLISH counts the subscribers of the node it reached only.
  const counts = await Promise.all(conn.nodes('all').map(async (node) => Number(((await node.pubsub('NUMSUB', channel)) as [string, number])[1] ?? 0)));
  return counts.reduce((a, b) => a + b, 0);
}

export async function subscribeReload(conn: RedisClient, prefix: string, onReload: () => void): Promise<void> {
  const channel = new RedisKeys(prefix).reloadChannel;
  conn.on('message', (ch: string) => {
    if (ch === channel) onReload();
  });
  await conn.subscribe(channel);
}
