// The S3 store against s3rver on loopback: the real S3 protocol through @aws-sdk/client-s3.
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StoreUnavailableError } from '../store/definition.ts';
import { LocalFolderStore } from '../store/local-store.ts';
import { mapLimit } from '../store/map-limit.ts';
import { cacheAction, listingFingerprint } from '../store/object-cache.ts';
import { parseS3Url } from '../store/s3-location.ts';
import { S3Store } from '../store/s3-store.ts';
import { startS3, TEST_CREDENTIALS, type TestS3 } from './support/s3-server.ts';

/** The example agents uploaded to the bucket (one folder each under examples/agents). */
const EXAMPLE_AGENTS = readdirSync('examples/agents', { withFileTypes: true }).filter((e) => e.isDirectory()).length;

let s3: TestS3;
beforeAll(async () => {
  s3 = await startS3();
  await s3.upload('examples', 'team-a/');
});
afterAll(async () => {
  await s3.close();
});

function store(prefix: string, opts: { defaultTtlMs?: number; now?: () => number; pollIntervalMs?: number } = {}): S3Store {
  return new S3Store({ location: { bucket: s3.bucket, prefix }, endpoint: s3.endpoint, region: 'us-east-1', credentials: TEST_CREDENTIALS, maxAttempts: 1, ...opts });
}

const AGENT = (name: string, model: string): string => `name: ${name}\ntype: llm\nbrain: {provider: scripted, model: ${model}, responses: [hi]}\ncapabilities: {grants: [hub:read]}\ncache_ttl: 60\n`;

describe('S3 store', () => {
  it('loads the same agents, skills and templates as the folder they were uploaded from', async () => {
    const fromFolder = await new LocalFolderStore('examples').load();
    const s = store('team-a/');
    const fromS3 = await s.load();
    s.close();
    const shape = (r: typeof fromS3): unknown => ({
      agents: r.agents.map((a) => ({ name: a.name, config: a.config, prompt: a.systemPrompt })),
      skills: r.shared.skills.map((k) => k.name),
      templates: r.shared.templates,
      problems: r.problems.map((p) => [p.field, p.message, p.line, p.severity]),
    });
    expect(fromS3.agents.map((a) => a.name)).toEqual(fromFolder.agents.map((a) => a.name));
    expect(fromS3.agents.map((a) => a.name)).toContain('greeter');
    expect(shape(fromS3)).toEqual(shape(fromFolder));
    expect(fromS3.agents.find((a) => a.name === 'ci-helper')?.files.config).toBe(`s3://${s3.bucket}/team-a/agents/ci-helper/config.yaml`);
  });

  it('serves a fresh object from the cache, revalidates a stale one with a 304 and no body, and picks up a change', async () => {
    await s3.put('rev/agents/echo/config.yaml', AGENT('echo', 'one'));
    await s3.put('rev/agents/echo/system-prompt.md', 'You are {{name}}.');
    let now = 1_000_000;
    const s = store('rev/', { now: () => now });
    expect((await s.load()).agents[0]?.config.brain.model).toBe('one');
    expect(s.stats).toMatchObject({ gets: 2, bodies: 2, notModified: 0 });

    // Within cache_ttl (60 s): no request for either object.
    now += 10_000;
    await s.load();
    expect(s.stats).toMatchObject({ gets: 2, bodies: 2, cacheHits: 2 });

    // Past cache_ttl: If-None-Match, answered 304, no body transferred.
    now += 60_000;
    expect((await s.load()).agents[0]?.config.brain.model).toBe('one');
    expect(s.stats).toMatchObject({ gets: 4, bodies: 2, notModified: 2 });

    // Changed in the bucket: the listing's ETag differs, so it is read again even inside the TTL.
    await s3.put('rev/agents/echo/config.yaml', AGENT('echo', 'two'));
    now += 1_000;
    expect((await s.load()).agents[0]?.config.brain.model).toBe('two');
    expect(s.stats).toMatchObject({ bodies: 3, notModified: 2 });
    s.close();
  });

  it('reports a broken object with its s3:// location and line, and keeps loading the others', async () => {
    await s3.put('mixed/agents/fine/config.yaml', AGENT('fine', 'm'));
    await s3.put('mixed/agents/fine/system-prompt.md', 'x');
    await s3.put('mixed/agents/broken/config.yaml', 'name: broken\ntype: llm\nbrain:\n  model: m\n  temprature: 1\ncapabilities: {}\n');
    await s3.put('mixed/agents/broken/system-prompt.md', 'x');
    const s = store('mixed/');
    const r = await s.load();
    s.close();
    expect(r.agents.map((a) => a.name)).toEqual(['fine']);
    expect(r.problems).toMatchObject([{ file: `s3://${s3.bucket}/mixed/agents/broken/config.yaml`, line: 5, column: 3, message: 'unknown key "temprature" (did you mean "temperature"?)' }]);
  });

  it('throws StoreUnavailableError while the server is down, and loads again once it is back', async () => {
    const s = store('team-a/');
    expect((await s.load()).agents).toHaveLength(EXAMPLE_AGENTS);
    await s3.down();
    try {
      await expect(s.load()).rejects.toBeInstanceOf(StoreUnavailableError);
    } finally {
      await s3.up();
    }
    expect((await s.load()).agents).toHaveLength(EXAMPLE_AGENTS);
    s.close();
  });

  it('a server that accepts connections but never answers counts as unreachable, not as a hang', async () => {
    const silent = createServer(() => undefined); // reads the request, never responds
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    const port = (silent.address() as AddressInfo).port;
    const s = new S3Store({ location: { bucket: 'b', prefix: '' }, endpoint: `http://127.0.0.1:${port}`, region: 'us-east-1', credentials: TEST_CREDENTIALS, maxAttempts: 1, requestTimeoutMs: 300 });
    const started = Date.now();
    try {
      await expect(s.load()).rejects.toBeInstanceOf(StoreUnavailableError);
      expect(Date.now() - started).toBeLessThan(5_000);
    } finally {
      s.close();
      silent.closeAllConnections();
      silent.close();
    }
  });

  it('watch reports a changed listing and stays quiet otherwise', async () => {
    await s3.put('watched/agents/w1/config.yaml', AGENT('w1', 'a'));
    await s3.put('watched/agents/w1/system-prompt.md', 'x');
    const s = store('watched/', { pollIntervalMs: 50 });
    await s.load();
    let changes = 0;
    const stop = s.watch(() => changes++);
    try {
      await new Promise((r) => setTimeout(r, 300));
      expect(changes).toBe(0);
      await s3.put('watched/agents/w1/config.yaml', AGENT('w1', 'b'));
      await expect.poll(() => changes, { timeout: 3_000 }).toBeGreaterThan(0);
    } finally {
      stop();
      s.close();
    }
  });
});

describe('warren validate s3://bucket/prefix', () => {
  it('validates a bucket: exit 0 on the uploaded examples, exit 1 with s3:// file:line on a broken one', async () => {
    await s3.put('cli-bad/agents/oops/config.yaml', 'name: oops\ntype: llm\nbrain:\n  model: m\ncapabilities:\n  grants: [nope]\n');
    await s3.put('cli-bad/agents/oops/system-prompt.md', 'x');
    const dir = mkdtempSync(join(tmpdir(), 'warren-validate-s3-'));
    writeFileSync(join(dir, 'warren.yaml'), `store: {endpoint: "${s3.endpoint}", region: us-east-1, access_key_id_env: TEST_S3_ID, secret_access_key_env: TEST_S3_SECRET}\n`);
    // Asynchronous: s3rver runs in this process, so a blocking spawn would starve it.
    const run = (url: string): Promise<{ status: number | null; stdout: string; stderr: string }> =>
      new Promise((done) => {
        const child = spawn(process.execPath, [resolve('bin/warren.js'), 'validate', url, '--config', join(dir, 'warren.yaml')], {
          env: { ...process.env, TEST_S3_ID: TEST_CREDENTIALS.accessKeyId, TEST_S3_SECRET: TEST_CREDENTIALS.secretAccessKey },
        });
        let stdout = '';
        let stderr = '';
        child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
        child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
        child.on('close', (status) => done({ status, stdout, stderr }));
      });
    const ok = await run(`s3://${s3.bucket}/team-a`);
    expect(ok.stdout).toContain(`${EXAMPLE_AGENTS} agents valid in s3://${s3.bucket}/team-a/`);
    expect(ok.status).toBe(0);
    const bad = await run(`s3://${s3.bucket}/cli-bad/`);
    expect(bad.status).toBe(1);
    expect(bad.stderr).toContain(`s3://${s3.bucket}/cli-bad/agents/oops/config.yaml:6:12: capabilities.grants[0]: expected a grant like service:scope[:resource]`);
  });
});

describe('cache decisions', () => {
  const entry = { etag: '"e1"', text: 't', confirmedAt: 1_000 };
  it('fetches what is not cached, uses a fresh unchanged entry, revalidates stale or changed ones', () => {
    expect(cacheAction(undefined, 0, 1000, '"e1"')).toEqual({ kind: 'fetch' });
    expect(cacheAction(entry, 1_500, 1000, '"e1"')).toEqual({ kind: 'use-cached' });
    expect(cacheAction(entry, 2_000, 1000, '"e1"')).toEqual({ kind: 'revalidate', etag: '"e1"' });
    expect(cacheAction(entry, 1_100, 1000, '"e2"')).toEqual({ kind: 'revalidate', etag: '"e1"' });
  });
  it('fingerprints listings independently of order', () => {
    expect(listingFingerprint(new Map([['a', '1'], ['b', '2']]))).toBe(listingFingerprint(new Map([['b', '2'], ['a', '1']])));
    expect(listingFingerprint(new Map([['a', '1']]))).not.toBe(listingFingerprint(new Map([['a', '2']])));
  });
  it('reads with bounded concurrency and keeps the input order', async () => {
    let inFlight = 0;
    let peak = 0;
    const out = await mapLimit([5, 1, 4, 2, 3, 0, 6], 3, async (ms, i) => {
      peak = Math.max(peak, ++inFlight);
      await new Promise((r) => setTimeout(r, ms * 3));
      inFlight--;
      return i;
    });
    expect(out).toEqual([0, 1, 2, 3, 4, 5, 6]);
    expect(peak).toBe(3);
    expect(await mapLimit([], 4, () => Promise.resolve(1))).toEqual([]);
  });

  it('parses s3:// URLs', () => {
    expect(parseS3Url('s3://my-bucket/team/a/')).toEqual({ bucket: 'my-bucket', prefix: 'team/a/' });
    expect(parseS3Url('s3://my-bucket')).toEqual({ bucket: 'my-bucket', prefix: '' });
    expect(parseS3Url('http://x')).toBeUndefined();
  });
});
