// The private Redis the tests start (test/support/redis-server.ts) is gone once stopped, however it was restarted:
// a cleanup that started it "in case" while it ran left a server behind after every CI run.
import { createConnection } from 'node:net';
import { describe, expect, it } from 'vitest';
import { startPrivateRedis, type PrivateRedis } from './support/redis-server.ts';

const listening = (port: number): Promise<boolean> =>
  new Promise((resolve) => {
    const sock = createConnection({ port, host: '127.0.0.1' });
    sock.once('connect', () => (sock.destroy(), resolve(true)));
    sock.once('error', () => resolve(false));
  });

describe('a private Redis', () => {
  it.each([
    ['started once', (): Promise<void> => Promise.resolve()],
    ['started again while it runs', (r: PrivateRedis): Promise<void> => r.start()],
    ['killed and started again', async (r: PrivateRedis): Promise<void> => (await r.kill(), r.start())],
  ] as const)('%s: stop() leaves nothing listening on its port', async (_what, then) => {
    const r = await startPrivateRedis();
    await then(r);
    expect(await listening(r.port)).toBe(true);
    await r.stop();
    expect(await listening(r.port)).toBe(false);
  });
});
