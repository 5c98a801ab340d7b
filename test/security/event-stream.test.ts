// Finding 7: a watch page client that stops reading /watch/events cannot make the hub buffer every event.
// Each stream's unsent bytes are capped (the client is dropped past the cap) and the number of streams is capped.
// Issue 26 finding 9: any local process could hold all 64 streams; streams now need the operator's session
// and one session holds at most MAX_STREAMS_PER_SESSION (watch-operator.test.ts runs the attack as an agent's user).
// The hub is the real one (createHubApp) on a node:http server of the test's own, so the test can see how many
// bytes the hub holds for the stalled client's socket.
import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createHubApp, type HubApp } from '../../local-hub/server.ts';
import { hubCall, watchSessionCookie, type HubCall } from '../../local-hub/testing.ts';
import { MAX_STREAM_BUFFER_BYTES, MAX_STREAM_CLIENTS, MAX_STREAMS_PER_SESSION } from '../../local-hub/watch/event-stream.ts';

const ADMIN = 'event-stream-admin';
let app: HubApp;
let server: Server;
let port: number;
let call: HubCall;
/** A session of the operator's (the link's cookie); each call gives a new one, as each login does. */
const session = (): Promise<string> => watchSessionCookie(`http://127.0.0.1:${port}/?token=${app.watchToken}`);
const serverSockets = new Set<Socket>();
const clients: Socket[] = [];

beforeEach(async () => {
  app = createHubApp({ dbPath: ':memory:', adminKey: ADMIN });
  server = createServer(app.listener);
  server.on('connection', (s) => {
    serverSockets.add(s);
    s.once('close', () => serverSockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
  call = hubCall(`http://127.0.0.1:${port}`);
});

afterEach(async () => {
  for (const c of clients.splice(0)) c.destroy();
  app.drain();
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  app.close();
});

/** A raw client that asks for the event stream (with `cookie`, else a new session); `paused` ones never read a byte of the answer. */
async function openStream(paused: boolean, cookie?: string): Promise<{ client: Socket; head: Promise<string> }> {
  cookie ??= await session();
  const client = connect(port, '127.0.0.1');
  clients.push(client);
  await new Promise<void>((resolve) => client.once('connect', resolve));
  if (paused) client.pause();
  const head = new Promise<string>((resolve) => {
    let text = '';
    client.on('data', (d: Buffer) => {
      text += d.toString('latin1');
      if (text.includes('\r\n\r\n')) resolve(text);
    });
    client.once('close', () => resolve(text));
  });
  client.write(`GET /watch/events HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAccept: text/event-stream\r\nCookie: ${cookie}\r\n\r\n`);
  return { client, head };
}

function serverSideOf(client: Socket): Socket | undefined {
  return [...serverSockets].find((s) => s.remotePort === client.localPort);
}

async function until(what: () => boolean, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!what()) {
    if (Date.now() > end) throw new Error('condition not reached in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('a client that stops reading the event stream', () => {
  it('never has more than the cap buffered for it, and is dropped', { timeout: 120_000 }, async () => {
    expect(MAX_STREAM_BUFFER_BYTES).toBe(1024 * 1024);
    const reg = await call<{ api_key: string }>('POST', '/agents/register', { key: ADMIN, body: { name: 'alice' } });
    const { client } = await openStream(true);
    await until(() => (serverSideOf(client)?.bytesWritten ?? 0) > 0); // the greeting was written
    const stalled = serverSideOf(client)!;
    const content = 'x'.repeat(100_000);
    let maxBuffered = 0;
    let published = 0;
    // 40 MB of events: far more than the kernel's socket buffers can take in.
    for (; published < 400 && !stalled.destroyed; published++) {
      const r = await call('POST', '/posts', { key: reg.body.api_key, body: { content } });
      expect(r.status).toBe(201);
      maxBuffered = Math.max(maxBuffered, stalled.writableLength);
    }
    expect(maxBuffered).toBeLessThanOrEqual(MAX_STREAM_BUFFER_BYTES + 2 * content.length);
    expect(stalled.destroyed).toBe(true);
    console.log(`stalled client dropped after ${published} posts; at most ${maxBuffered} bytes were buffered for it`);
  });

  it('a client that reads keeps its stream through the same burst', { timeout: 120_000 }, async () => {
    const reg = await call<{ api_key: string }>('POST', '/agents/register', { key: ADMIN, body: { name: 'alice' } });
    const { client } = await openStream(false);
    let received = 0;
    client.on('data', (d: Buffer) => (received += d.length));
    await until(() => received > 0);
    const content = 'y'.repeat(100_000);
    for (let i = 0; i < 100; i++) await call('POST', '/posts', { key: reg.body.api_key, body: { content } });
    await until(() => received > 100 * content.length);
    expect(client.destroyed).toBe(false);
  });
});

describe('the number of streams', () => {
  it('needs a session: without one (or with a forged one) no stream opens', async () => {
    expect((await (await openStream(false, '')).head)).toMatch(/^HTTP\/1\.1 401/);
    const forged = `warren_watch_${port}=${'A'.repeat(22)}.${'B'.repeat(43)}`;
    expect((await (await openStream(false, forged)).head)).toMatch(/^HTTP\/1\.1 401/);
  });

  it(`is capped at ${MAX_STREAMS_PER_SESSION} per session: one session cannot lock the others out`, { timeout: 60_000 }, async () => {
    expect(MAX_STREAMS_PER_SESSION).toBe(8);
    const greedy = await session();
    const open = [];
    for (let i = 0; i < MAX_STREAMS_PER_SESSION; i++) open.push(await openStream(false, greedy));
    for (const s of open) expect(await s.head).toMatch(/^HTTP\/1\.1 200/);
    const extra = await openStream(false, greedy);
    expect(await extra.head).toMatch(/^HTTP\/1\.1 429/);
    expect(await (await openStream(false)).head).toMatch(/^HTTP\/1\.1 200/); // another session still gets one
    open[0]!.client.destroy();
    let head = '';
    const end = Date.now() + 5000;
    while (!head.startsWith('HTTP/1.1 200') && Date.now() < end) head = await (await openStream(false, greedy)).head;
    expect(head).toMatch(/^HTTP\/1\.1 200/);
  });

  it(`is capped at ${MAX_STREAM_CLIENTS}: one more is refused with 503 until one closes`, { timeout: 60_000 }, async () => {
    expect(MAX_STREAM_CLIENTS).toBe(64);
    const open = [];
    for (let i = 0; i < MAX_STREAM_CLIENTS; i++) open.push(await openStream(false));
    for (const s of open) expect(await s.head).toMatch(/^HTTP\/1\.1 200/);
    const extra = await openStream(false);
    expect(await extra.head).toMatch(/^HTTP\/1\.1 503/);
    open[0]!.client.destroy();
    // The hub notices the closed stream shortly after; then a new one fits again.
    let head = '';
    const end = Date.now() + 5000;
    while (!head.startsWith('HTTP/1.1 200') && Date.now() < end) head = await (await openStream(false)).head;
    expect(head).toMatch(/^HTTP\/1\.1 200/);
  });
});
