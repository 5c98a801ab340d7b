// The demo seed: examples/hub-seed.yaml through the hub's API, idempotent, and clear errors for a bad file.
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { applySeed, readSeedFile, SeedError } from '../local-hub/seed.ts';
import { startTestHub, type TestHub } from '../local-hub/testing.ts';
import { freePort } from './support/free-port.ts';
import { waitFor } from './support/hub-api.ts';

let t: TestHub;
beforeEach(async () => {
  t = await startTestHub();
});
afterEach(() => t.close());

type Posts = { posts: Array<{ title: string | null; community: string | null; author: { name: string }; comment_count: number }>; total: number };

describe('hub seed', () => {
  it('loads the example seed: communities, agents, posts with comments, and the mention notifies the agent', async () => {
    const result = await applySeed(t.hub.url, t.adminKey, readSeedFile('examples/hub-seed.yaml'));
    expect(result).toEqual({ communities: 1, agents: 2, posts: 2, comments: 1 });
    const posts = await t.call<Posts>('GET', '/posts', { key: t.adminKey });
    expect(posts.body.posts.map((p) => [p.author.name, p.community, p.comment_count])).toEqual([
      ['dana', 'm/warren-demo', 0],
      ['dana', 'm/general', 1],
    ]);
    const dana = await t.call<{ type: string }>('GET', '/agents/dana', { key: t.adminKey });
    expect(dana.body.type).toBe('human');
    const inbox = await t.call<{ notifications: Array<{ type: string; from: { name: string } }> }>('GET', '/notifications', { key: t.adminKey, query: { agent_id: 'greeter' } });
    expect(inbox.body.notifications).toMatchObject([{ type: 'mention', from: { name: 'dana' } }]);
  });

  it('adds nothing when applied again', async () => {
    const seed = readSeedFile('examples/hub-seed.yaml');
    await applySeed(t.hub.url, t.adminKey, seed);
    expect(await applySeed(t.hub.url, t.adminKey, seed)).toEqual({ communities: 0, agents: 0, posts: 0, comments: 0 });
    expect((await t.call<Posts>('GET', '/posts', { key: t.adminKey })).body.total).toBe(2);
  });

  it('names the file, line and field of a bad seed', () => {
    const dir = mkdtempSync(join(tmpdir(), 'warren-seed-'));
    const cases: Array<[string, RegExp]> = [
      ['posts:\n  - author: dana\n    content: hi\n    colour: red\n', /bad\.yaml:2: posts\.0: Unrecognized key: "colour"/],
      ['agents:\n  - name: Not Valid\n', /bad\.yaml:2: agents\.0\.name: lowercase letters/],
      ['posts:\n  - author: dana\n    content: [unclosed\n', /bad\.yaml:\d+:\d+: Flow sequence/],
      ['posts:\n  - author: dana\n', /bad\.yaml:2: posts\.0\.content: /],
    ];
    for (const [text, expected] of cases) {
      const file = join(dir, 'bad.yaml');
      writeFileSync(file, text);
      let message = '';
      try {
        readSeedFile(file);
      } catch (err) {
        expect(err).toBeInstanceOf(SeedError);
        message = (err as Error).message;
      }
      expect([text, message]).toEqual([text, expect.stringMatching(expected)]);
    }
  });

  it('reports a post by an unknown author with the hub’s answer', async () => {
    const seed = readSeedFile('examples/hub-seed.yaml');
    await expect(applySeed(t.hub.url, t.adminKey, { ...seed, agents: [] })).rejects.toThrow(/seeding post by dana: hub answered 404/);
  });

  it('`warren hub --seed` starts the hub seeded', async () => {
    const port = await freePort();
    const child = spawn(process.execPath, [resolve('bin/warren.js'), 'hub', '--port', String(port), '--db', ':memory:', '--seed', 'examples/hub-seed.yaml'], {
      env: { ...process.env, WARREN_HUB_ADMIN_KEY: 'seed-cli-admin' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
    try {
      await waitFor('hub seeded', () => (out.includes('hub seeded') ? true : undefined), 15_000);
      const res = await fetch(`http://127.0.0.1:${port}/api/v1/posts`, { headers: { authorization: 'Bearer seed-cli-admin' } });
      expect(((await res.json()) as Posts).total).toBe(2);
    } finally {
      child.kill('SIGINT');
    }
    expect(await exited).toBe(0);
  });
});
