// Ports for the servers tests start as separate processes (redis-server, a hub, a daemon's metrics).
//
// Not the kernel's `listen(0)`: a port it hands out comes from the ephemeral range (32768–60999 here), where the
// next outgoing connection of any process may take it between our check and the server's own bind; and a Redis
// Cluster node needs its port + 10,000 as well, which above 55535 does not exist (redis-server refuses to start).
// Instead each vitest worker takes ports from its own block below the ephemeral range (10000–19999, a block of
// 1,000 per pool id), so parallel workers never race for one, and each port is checked free by binding it.
import { createServer } from 'node:net';

const FIRST = 10_000;
const BLOCK = 1_000;
const BLOCKS = 10;

const pool = Number(process.env.VITEST_POOL_ID ?? '0') % BLOCKS;
// A random start within the block: two runs of the suite side by side (another checkout) rarely meet.
let next = Math.floor(Math.random() * BLOCK);

function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.unref();
    srv.once('error', () => resolve(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
  });
}

/**
 * A currently free TCP port on 127.0.0.1, from this worker's block. `withBus`: the port + 10,000 is free too
 * (a Redis Cluster node's bus port).
 */
export async function freePort(opts: { withBus?: boolean } = {}): Promise<number> {
  for (let tries = 0; tries < BLOCK; tries++) {
    const port = FIRST + pool * BLOCK + (next++ % BLOCK);
    if ((await bindable(port)) && (!opts.withBus || (await bindable(port + 10_000)))) return port;
  }
  throw new Error(`no free port in ${FIRST + pool * BLOCK}–${FIRST + (pool + 1) * BLOCK - 1}`);
}
