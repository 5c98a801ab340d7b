// The openai SDK's HTTP client (executors/llm/pool-fetch.ts) against a real HTTP server: what the SDK reads of a
// Response is what the global fetch would have given it.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ownBytes, poolFetch } from '../executors/llm/pool-fetch.ts';

let server: Server;
let base: string;
const seen: Array<{ method: string; headers: IncomingMessage['headers']; body: string }> = [];

beforeAll(async () => {
  server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let body = '';
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      body = Buffer.concat(chunks).toString('utf8');
      seen.push({ method: req.method ?? '', headers: req.headers, body });
      switch (req.url) {
        case '/json':
          res.writeHead(201, { 'content-type': 'application/json', 'x-request-id': 'r1', 'set-cookie': ['a=1', 'b=2'] }).end(JSON.stringify({ echo: body }));
          return;
        case '/gzip':
          res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' }).end(gzipSync(JSON.stringify({ zipped: true })));
          return;
        case '/empty':
          res.writeHead(204).end();
          return;
        case '/sse':
          res.writeHead(200, { 'content-type': 'text/event-stream' });
          res.write('data: one\n\n');
          setTimeout(() => res.end('data: two\n\n'), 50);
          return;
        case '/hang':
          res.writeHead(200, { 'content-type': 'text/event-stream' });
          res.write('data: first\n\n'); // and nothing more until the client gives up
          return;
        default:
          res.writeHead(404).end('no');
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

describe('poolFetch', () => {
  it('sends a long text body (a model request) whole, multi-byte characters and length exact, from bytes of its own', async () => {
    const text = JSON.stringify({ messages: [{ role: 'system', content: `Grüße, 你好 🦀 ${'lorem ipsum '.repeat(400)}` }] });
    const res = await poolFetch(`${base}/json`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: text });
    expect(await res.json()).toEqual({ echo: text });
    expect(seen.at(-1)!.headers['content-length']).toBe(String(Buffer.byteLength(text)));
    // Its bytes are not a slice of Node's shared pool, which one long-lived request would keep whole.
    const bytes = ownBytes(text);
    expect(Buffer.isBuffer(bytes) && bytes.buffer.byteLength).toBe(Buffer.byteLength(text));
    expect(Buffer.from(text).buffer.byteLength).toBeGreaterThan(Buffer.byteLength(text)); // what undici would have made
    expect(ownBytes('{"q":1}')).toBe('{"q":1}');
  });


  it('sends method, headers (Headers or a record) and body; gives back status, headers and body', async () => {
    const res = await poolFetch(`${base}/json`, { method: 'post', headers: new Headers({ 'Content-Type': 'application/json', Authorization: 'Bearer k' }), body: '{"q":1}' });
    expect(res.status).toBe(201);
    expect(res.ok).toBe(true);
    expect(res.headers.get('x-request-id')).toBe('r1');
    expect(res.headers.get('set-cookie')).toContain('a=1');
    expect(await res.json()).toEqual({ echo: '{"q":1}' });
    const last = seen.at(-1)!;
    expect(last).toMatchObject({ method: 'POST', body: '{"q":1}' });
    expect(last.headers.authorization).toBe('Bearer k');
    const again = await poolFetch(new URL(`${base}/json`), { method: 'POST', headers: { 'X-Thing': 'y' }, body: new TextEncoder().encode('bytes') });
    expect(await again.json()).toEqual({ echo: 'bytes' });
    expect(seen.at(-1)!.headers['x-thing']).toBe('y');
  });

  it('decompresses a body a server compressed anyway', async () => {
    const res = await poolFetch(`${base}/gzip`);
    expect(res.headers.get('content-encoding')).toBeNull();
    expect(await res.json()).toEqual({ zipped: true });
  });

  it('gives a 204 no body, and a 404 its status and text', async () => {
    const empty = await poolFetch(`${base}/empty`, { method: 'DELETE' });
    expect(empty.status).toBe(204);
    expect(empty.body).toBeNull();
    const missing = await poolFetch(`${base}/nowhere`);
    expect(missing.status).toBe(404);
    expect(await missing.text()).toBe('no');
  });

  it('hands an event stream on as it arrives', async () => {
    const res = await poolFetch(`${base}/sse`);
    const reader = res.body!.getReader();
    const first = await reader.read();
    expect(new TextDecoder().decode(first.value)).toBe('data: one\n\n'); // before the server wrote the rest
    let rest = '';
    for (let r = await reader.read(); !r.done; r = await reader.read()) rest += new TextDecoder().decode(r.value);
    expect(rest).toBe('data: two\n\n');
  });

  it('ends a request and a stream in progress when its signal aborts, with an AbortError as fetch would', async () => {
    const before = new AbortController();
    before.abort();
    await expect(poolFetch(`${base}/json`, { signal: before.signal })).rejects.toMatchObject({ name: 'AbortError' });
    const during = new AbortController();
    const res = await poolFetch(`${base}/hang`, { signal: during.signal });
    const reader = res.body!.getReader();
    await reader.read();
    setTimeout(() => during.abort(), 20);
    await expect(reader.read()).rejects.toBeDefined();
  });

  it('fails like fetch when nothing listens', async () => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as { port: number }).port;
    await new Promise((r) => closed.close(r));
    await expect(poolFetch(`http://127.0.0.1:${port}/`)).rejects.toThrow();
  });
});
