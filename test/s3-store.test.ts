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
import { listingDigest, MANIFEST_KEY, manifestOf, parseManifest } from '../store/s3-manifest.ts';
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

interface RunResult {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** `warren <args>` with the test bucket's credentials; asynchronous: s3rver runs in this process, so a blocking spawn would starve it. */
function runWarren(args: string[]): Promise<RunResult> {
  return new Promise((done) => {
    const child = spawn(process.execPath, [resolve('bin/warren.js'), ...args], {
      env: { ...process.env, TEST_S3_ID: TEST_CREDENTIALS.accessKeyId, TEST_S3_SECRET: TEST_CREDENTIALS.secretAccessKey },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('close', (status) => done({ status, stdout, stderr }));
  });
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

describe('the manifest: one request a poll for an unchanged bucket', () => {
  const requests = (s: S3Store): number => s.stats.lists + s.stats.manifestReads + s.stats.gets;

  it('polls an unchanged bucket with one conditional GET, notices a change once the manifest is rewritten', async () => {
    for (let i = 0; i < 3; i++) {
      await s3.put(`man/agents/man${i}/config.yaml`, AGENT(`man${i}`, 'a'));
      await s3.put(`man/agents/man${i}/system-prompt.md`, 'x');
    }
    const writer = store('man/');
    const written = await writer.writeManifest();
    writer.close();
    expect(written.objects).toBe(6);
    const s = store('man/', { pollIntervalMs: 40 });
    const loaded = await s.load();
    expect(loaded.agents.map((a) => a.name).sort()).toEqual(['man0', 'man1', 'man2']);
    expect(loaded.problems).toEqual([]); // the manifest is no definition and, being current, no warning
    let changes = 0;
    const stop = s.watch(() => changes++);
    try {
      const before = { ...s.stats };
      await expect.poll(() => s.stats.manifestReads, { timeout: 5_000 }).toBeGreaterThan(before.manifestReads + 5);
      expect(changes).toBe(0);
      // Every poll was one manifest read and nothing else: no listing, no object read.
      expect(requests(s) - requests({ stats: before } as S3Store)).toBe(s.stats.manifestReads - before.manifestReads);
      expect(s.stats.lists).toBe(before.lists);
      await s3.put('man/agents/man1/config.yaml', AGENT('man1', 'b'));
      const rewriter = store('man/');
      await rewriter.writeManifest();
      rewriter.close();
      await expect.poll(() => changes, { timeout: 5_000 }).toBeGreaterThan(0);
      expect((await s.load()).agents.find((a) => a.name === 'man1')?.config.brain.model).toBe('b');
    } finally {
      stop();
      s.close();
    }
  });

  it('warns about a stale manifest and then finds changes by listing; a deleted manifest falls back to listing too', async () => {
    await s3.put('stale/agents/st1/config.yaml', AGENT('st1', 'a'));
    await s3.put('stale/agents/st1/system-prompt.md', 'x');
    const writer = store('stale/');
    await writer.writeManifest();
    await s3.put('stale/agents/st2/config.yaml', AGENT('st2', 'a')); // uploaded without rewriting the manifest
    await s3.put('stale/agents/st2/system-prompt.md', 'x');
    const s = store('stale/', { pollIntervalMs: 40 });
    const loaded = await s.load();
    expect(loaded.agents.map((a) => a.name).sort()).toEqual(['st1', 'st2']);
    expect(loaded.problems.map((p) => [p.file, p.severity])).toEqual([[`s3://${s3.bucket}/stale/warren-manifest.json`, 'warning']]);
    expect(loaded.problems[0]?.message).toContain('run `warren manifest` after each upload');
    let changes = 0;
    const stop = s.watch(() => changes++);
    try {
      await expect.poll(() => s.stats.lists, { timeout: 5_000 }).toBeGreaterThan(3); // untrusted: polls list
      await s3.put('stale/agents/st2/config.yaml', AGENT('st2', 'b'));
      await expect.poll(() => changes, { timeout: 5_000 }).toBeGreaterThan(0);
    } finally {
      stop();
      s.close();
    }

    // A current manifest, then deleted: the next polls list the bucket again and still see changes.
    await writer.writeManifest();
    writer.close();
    const t = store('stale/', { pollIntervalMs: 40 });
    expect((await t.load()).problems).toEqual([]);
    let seen = 0;
    const stopT = t.watch(() => seen++);
    try {
      await s3.remove('stale/warren-manifest.json');
      const lists = t.stats.lists;
      await expect.poll(() => t.stats.lists, { timeout: 5_000 }).toBeGreaterThan(lists + 2);
      expect(seen).toBe(0); // the manifest's removal is no change of the definitions
      await s3.put('stale/agents/st1/config.yaml', AGENT('st1', 'c'));
      await expect.poll(() => seen, { timeout: 5_000 }).toBeGreaterThan(0);
    } finally {
      stopT();
      t.close();
    }
  });

  it('`warren manifest s3://…` writes it; a folder store is refused with a clear error', async () => {
    await s3.put('cli-man/agents/cm1/config.yaml', AGENT('cm1', 'a'));
    await s3.put('cli-man/agents/cm1/system-prompt.md', 'x');
    const dir = mkdtempSync(join(tmpdir(), 'warren-manifest-'));
    writeFileSync(join(dir, 'warren.yaml'), `store: {endpoint: "${s3.endpoint}", region: us-east-1, access_key_id_env: TEST_S3_ID, secret_access_key_env: TEST_S3_SECRET}\n`);
    const run = (args: string[]): Promise<RunResult> => runWarren(['manifest', ...args, '--config', join(dir, 'warren.yaml')]);
    const ok = await run([`s3://${s3.bucket}/cli-man/`]);
    expect(ok.stdout).toContain(`wrote s3://${s3.bucket}/cli-man/warren-manifest.json: 2 objects`);
    expect(ok.status).toBe(0);
    const s = store('cli-man/');
    expect((await s.load()).problems).toEqual([]);
    s.close();
    const folder = await run([dir]);
    expect(folder.status).toBe(1);
    expect(folder.stderr).toContain('only an S3 store has a manifest');
  });
});

describe('warren validate s3://bucket/prefix', () => {
  it('validates a bucket: exit 0 on the uploaded examples, exit 1 with s3:// file:line on a broken one', async () => {
    await s3.put('cli-bad/agents/oops/config.yaml', 'name: oops\ntype: llm\nbrain:\n  model: m\ncapabilities:\n  grants: [nope]\n');
    await s3.put('cli-bad/agents/oops/system-prompt.md', 'x');
    const dir = mkdtempSync(join(tmpdir(), 'warren-validate-s3-'));
    writeFileSync(join(dir, 'warren.yaml'), `store: {endpoint: "${s3.endpoint}", region: us-east-1, access_key_id_env: TEST_S3_ID, secret_access_key_env: TEST_S3_SECRET}\n`);
    const run = (url: string): Promise<RunResult> => runWarren(['validate', url, '--config', join(dir, 'warren.yaml')]);
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
  it('digests a listing without the manifest itself, and trusts only a well-formed manifest', () => {
    const listing = new Map([['agents/a/config.yaml', '"1"']]);
    expect(listingDigest(new Map([...listing, [MANIFEST_KEY, '"m"']]))).toBe(listingDigest(listing));
    expect(listingDigest(new Map([['agents/a/config.yaml', '"2"']]))).not.toBe(listingDigest(listing));
    const m = manifestOf(listing, new Date(0));
    expect(m).toEqual({ version: 1, fingerprint: listingDigest(listing), objects: 1, written_at: '1970-01-01T00:00:00.000Z' });
    expect(parseManifest(JSON.stringify(m))).toEqual(m);
    for (const bad of ['', 'not json', '{}', JSON.stringify({ ...m, version: 2 }), JSON.stringify({ ...m, fingerprint: 'short' }), JSON.stringify({ ...m, extra: 1 })]) {
      expect(parseManifest(bad)).toBeUndefined();
    }
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
