// The README's "Talk to greeter from the command line" block, run as written (bash, curl, `npx warren hub user`)
// beside a real `warren start` of the repository's own warren.yaml, the way a reader runs them: both from the same
// folder, no admin key given by anyone (the daemon generates it and keeps it in data/hub-admin-key, where
// `warren hub user` and `warren status` find it). Twice, since a reader will run it again, across a restart of the
// daemon (the kept key still works). Then Ctrl-C (SIGINT) to the daemon, which the README says exits 0.
// The folder is a copy of the checkout made of links (so the repository's data/ is never touched); what differs
// from a reader's run is only where things listen: this test's hub port, Redis and key prefix.
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { PROCESS_START_MS } from './support/ceilings.ts';
import { freePort } from './support/free-port.ts';
import { hubCaller, waitFor, type WirePost } from './support/hub-api.ts';
import { spawnWarren, type WarrenProcess } from './support/warren-process.ts';

const run = promisify(execFile);
const redisUrl = inject('redisUrl');
let daemon: WarrenProcess | undefined;
afterEach(() => {
  daemon?.kill('SIGKILL');
  daemon = undefined;
});

/** The walk-through's prose and its first ```sh block. */
function walkthrough(): { prose: string; script: string } {
  const readme = readFileSync('README.md', 'utf8');
  const at = readme.indexOf('### Talk to greeter from the command line');
  expect(at, 'the README has the walk-through').toBeGreaterThan(0);
  const section = readme.slice(at);
  const block = /```sh\n([\s\S]*?)```/.exec(section)!;
  return { prose: section.slice(0, block.index), script: block[1]! };
}

/** A folder that looks like a fresh checkout (links to its files) with its own warren.yaml and no data/. */
function checkoutCopy(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'warren-walk-'));
  for (const entry of readdirSync('.')) {
    if (['warren.yaml', 'data', 'workspaces', 'definitions', '.git'].includes(entry)) continue;
    symlinkSync(resolve(entry), join(dir, entry));
  }
  mkdirSync(join(dir, 'definitions', 'agents'), { recursive: true }); // as in a fresh clone: no agents of the reader's own
  const yaml = readFileSync('warren.yaml', 'utf8');
  expect(yaml).toMatch(/^ {2}prefix: warren$/m);
  writeFileSync(join(dir, 'warren.yaml'), yaml.replace(/^ {2}prefix: warren$/m, `  prefix: ${prefix}`));
  return dir;
}

describe('the README walk-through', () => {
  it('runs twice as written beside `warren start` of the repo config, with no admin key given; greeter answers; Ctrl-C exits 0', { timeout: 180_000 }, async () => {
    const port = await freePort();
    const folder = checkoutCopy(`walk${port}`);
    // Where things listen, for the daemon and the reader's shell alike; no WARREN_HUB_ADMIN_KEY anywhere.
    const env = { ...process.env, REDIS_URL: redisUrl, WARREN_HUB_PORT: String(port), WARREN_METRICS_PORT: '0', OPENAI_API_KEY: '', WARREN_HUB_ADMIN_KEY: '', WARREN_HUB_URL: '', WARREN_HUB_EMBEDDED: '', WARREN_STORE: '' };
    const start = (): WarrenProcess => spawnWarren(['start'], { cwd: folder, env, config: join(folder, 'warren.yaml') });

    const { prose, script: written } = walkthrough();
    expect(prose).toMatch(/data\/hub-admin-key/);
    expect(written).not.toMatch(/ADMIN_KEY|<[^>]+>/); // nothing for the reader to fill in
    expect(written).toContain('npx warren hub user alice');
    const script = written.replaceAll('127.0.0.1:7070', `127.0.0.1:${port}`);
    const api = hubCaller(`http://127.0.0.1:${port}`);

    const keys: string[] = [];
    for (const round of [1, 2]) {
      daemon = start();
      const kept = await daemon.waitForLine(/hub admin key kept in data\/hub-admin-key/, PROCESS_START_MS);
      const keyFile = join(folder, 'data', 'hub-admin-key');
      const adminKey = readFileSync(keyFile, 'utf8').trim();
      expect(kept).not.toContain(adminKey); // the log says where, never the key
      expect(statSync(keyFile).mode & 0o777).toBe(0o600);
      await daemon.waitForLine(/warren is running/);

      const { stdout } = await run('bash', ['-euo', 'pipefail', '-c', `${script}\necho\necho "POST=$POST"\necho "ME=$ME"`], { cwd: folder, env, timeout: 60_000 });
      const postId = /^POST=(.+)$/m.exec(stdout)?.[1];
      const me = /^ME=(botburrow_agent_\w+)$/m.exec(stdout)?.[1];
      expect(postId ?? stdout, `round ${round}: a post id`).toMatch(/^[\w-]+$/);
      expect(me, `round ${round}: a key`).toBeDefined();
      keys.push(me!);
      const replies = await waitFor(`greeter's answer, round ${round}`, async () => {
        const post = await api.get<WirePost>(`/posts/${postId}?include_comments=true`, me!);
        const r = (post.comments ?? []).filter((c) => c.author.name === 'greeter');
        return r.length ? r : undefined;
      }, 30_000);
      expect(replies[0]!.content).toMatch(/I'm greeter/);

      // `warren status` from the same folder reads the budgets with the kept key: no `-` in the BUDGET column.
      const status = await run(process.execPath, [resolve('bin/warren.js'), 'status'], { cwd: folder, env });
      expect(status.stdout).toMatch(/^greeter .*\$0\.00 \(no limit\) · \$0\.00 \(no limit\)/m);
      expect(status.stdout).not.toMatch(/no hub admin key/);

      daemon.kill('SIGINT');
      expect(await daemon.exited).toBe(0);
      if (round === 1) expect(readFileSync(keyFile, 'utf8').trim(), 'the same key after a restart').toBe(adminKey);
    }
    expect(keys[0]).not.toBe(keys[1]);
    // The first round's key no longer works: `warren hub user` issued a new one.
    daemon = start();
    await daemon.waitForLine(/warren is running/);
    expect((await fetch(`http://127.0.0.1:${port}/api/v1/agents/me`, { headers: { authorization: `Bearer ${keys[0]}` } })).status).toBe(401);
    expect((await fetch(`http://127.0.0.1:${port}/api/v1/agents/me`, { headers: { authorization: `Bearer ${keys[1]}` } })).status).toBe(200);
    daemon.kill('SIGINT');
    expect(await daemon.exited).toBe(0);
  });
});
