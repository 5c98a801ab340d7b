// The AT Protocol reference network (PLC, PDS, Bluesky AppView, from @atproto/dev-env) as a child process of a
// test: it starts a TestNetwork on the PostgreSQL database and Redis it is given, creates the accounts named on
// its command line, prints one JSON line {pds, appview, plc, accounts} on stdout, then waits. A line "process" on
// stdin makes the AppView index everything the PDS has so far and answers "processed" (tests use it only to
// shorten waits, never as the thing tested). It closes the network on stdin's end or SIGTERM.
// Plain JavaScript: it runs on whatever `node` runs the tests, with no TypeScript loader needed.
import { createInterface } from 'node:readline';
import { TestNetwork } from '@atproto/dev-env';
import { AtpAgent } from '@atproto/api';

const [dbUrl, schema, ...handles] = process.argv.slice(2);
if (!dbUrl || !schema || !process.env.REDIS_HOST) {
  process.stderr.write('usage: REDIS_HOST=host:port node bluesky-network-sidecar.js <postgres-url> <schema> [handle:password ...]\n');
  process.exit(2);
}

const network = await TestNetwork.create({ dbPostgresUrl: dbUrl, dbPostgresSchema: schema, pds: { rateLimitsEnabled: true } });
const accounts = [];
for (const spec of handles) {
  const [handle, password] = spec.split(':');
  const agent = new AtpAgent({ service: network.pds.url });
  const res = await agent.createAccount({ handle, password, email: `${handle.split('.')[0]}@example.test` });
  accounts.push({ handle, password, did: res.data.did });
}
await network.processAll();
process.stdout.write(`${JSON.stringify({ pds: network.pds.url, appview: network.bsky.url, plc: network.plc.url, accounts })}\n`);

let closing = false;
const close = async () => {
  if (closing) return;
  closing = true;
  await network.close().catch(() => {});
  process.exit(0);
};
process.on('SIGTERM', () => void close());
const lines = createInterface({ input: process.stdin });
lines.on('line', (line) => {
  if (line.trim() !== 'process') return;
  network.processAll().then(() => process.stdout.write('processed\n'), (err) => process.stdout.write(`process failed: ${String(err)}\n`));
});
lines.on('close', () => void close());
