// The README's "Talk to greeter from the command line" block, run as written (bash, curl, `npx warren hub user`)
// against a real `warren start` with its embedded hub and the example agents: twice, since a reader will run it
// again. Then Ctrl-C (SIGINT) to the daemon, which the README says exits 0.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { freePort } from './support/free-port.ts';
import { hubCaller, waitFor, type WirePost } from './support/hub-api.ts';
import { startWarren, type WarrenProcess } from './support/warren-process.ts';

const run = promisify(execFile);
const redisUrl = inject('redisUrl');
let daemon: WarrenProcess | undefined;
afterEach(() => {
  daemon?.kill('SIGKILL');
  daemon = undefined;
});

/** The first ```sh block after the walk-through's heading. */
function walkthrough(): string {
  const readme = readFileSync('README.md', 'utf8');
  const at = readme.indexOf('### Talk to greeter from the command line');
  expect(at, 'the README has the walk-through').toBeGreaterThan(0);
  const block = /```sh\n([\s\S]*?)```/.exec(readme.slice(at));
  return block![1]!;
}

describe('the README walk-through', () => {
  it('runs twice as written against a real daemon, greeter answers each time, and Ctrl-C exits 0', { timeout: 120_000 }, async () => {
    const port = await freePort();
    const adminKey = 'walkthrough-admin-key-0123456789';
    const dir = mkdtempSync(join(tmpdir(), 'warren-walk-'));
    daemon = startWarren({
      hubUrl: `http://127.0.0.1:${port}`,
      hub: `hub: {url: "http://127.0.0.1:${port}", embedded: true, port: ${port}, db: "${join(dir, 'hub.sqlite')}"}`,
      adminKey,
      redisUrl,
      prefix: `walk${port}`,
      agentsDir: resolve('examples'),
      env: { OPENAI_API_KEY: '', WARREN_HUB_PORT: '', WARREN_HUB_URL: '', WARREN_HUB_EMBEDDED: '', WARREN_METRICS_PORT: '' },
    });
    await daemon.waitForLine(/hub listening|"msg":"started"|scheduler/i);
    const api = hubCaller(`http://127.0.0.1:${port}`);
    await waitFor('the hub', async () => ((await fetch(`http://127.0.0.1:${port}/health`).catch(() => undefined))?.ok ? true : undefined), 30_000);

    const script = walkthrough()
      .replace('<the admin key printed at start>', adminKey)
      .replaceAll('127.0.0.1:7070', `127.0.0.1:${port}`);
    expect(script).toContain('npx warren hub user alice');
    const keys: string[] = [];
    for (const round of [1, 2]) {
      // WARREN_HUB_URL points `warren hub user` (which reads the repo's warren.yaml) at this test's hub.
      const { stdout } = await run('bash', ['-euo', 'pipefail', '-c', `${script}\necho\necho "POST=$POST"\necho "ME=$ME"`], {
        env: { ...process.env, WARREN_HUB_URL: `http://127.0.0.1:${port}`, WARREN_HUB_ADMIN_KEY: '' },
        timeout: 60_000,
      });
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
    }
    expect(keys[0]).not.toBe(keys[1]);
    // The first round's key no longer works: `warren hub user` issued a new one.
    expect((await fetch(`http://127.0.0.1:${port}/api/v1/agents/me`, { headers: { authorization: `Bearer ${keys[0]}` } })).status).toBe(401);

    daemon.kill('SIGINT');
    expect(await daemon.exited).toBe(0);
  });
});
