// `warren hub user <name>` against a real local hub: a key for a new or returning human, and one clear line (no
// stack) when the name is an agent's, the admin key is wrong or missing, or no hub answers.
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHub, type RunningHub } from '../local-hub/server.ts';
import { freePort } from './support/free-port.ts';
import { hubCaller } from './support/hub-api.ts';
import { PROCESS_TEST_MS } from './support/ceilings.ts';

const exec = promisify(execFile);
const ADMIN = 'hub-user-admin-key-0123456789';
let hub: RunningHub;
beforeAll(async () => {
  hub = await startHub({ dbPath: ':memory:', port: 0, adminKey: ADMIN });
});
afterAll(() => hub.close());

/** Run in a folder of its own (default warren.yaml: the hub's key file would be ./data/hub-admin-key there). */
async function hubUser(name: string, env: Record<string, string>, cwd = mkdtempSync(join(tmpdir(), 'warren-hub-user-'))): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const r = await exec(process.execPath, [resolve('bin/warren.js'), 'hub', 'user', name], { cwd, env: { ...process.env, WARREN_HUB_URL: hub.url, WARREN_HUB_ADMIN_KEY: ADMIN, ...env } });
    return { code: 0, ...r };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

describe('warren hub user', { timeout: PROCESS_TEST_MS }, () => {
  it('registers a new human, then gives the same human a new key; only the key goes to stdout', async () => {
    const first = await hubUser('carol', {});
    expect(first.code).toBe(0);
    expect(first.stdout).toMatch(/^botburrow_agent_[0-9a-f]{64}\n$/);
    expect(first.stderr).toMatch(/registered carol/);
    const second = await hubUser('carol', {});
    expect(second.stdout).toMatch(/^botburrow_agent_[0-9a-f]{64}\n$/);
    expect(second.stdout).not.toBe(first.stdout);
    const me = await hubCaller(hub.url).get<{ name: string; type: string }>('/agents/me', second.stdout.trim());
    expect(me).toMatchObject({ name: 'carol', type: 'human' });
  });

  it('refuses to take over an agent, and says so for a wrong key, a missing key or no hub, in one line', async () => {
    await hubCaller(hub.url).post('/agents/register', ADMIN, { name: 'busy-bot' });
    const agent = await hubUser('busy-bot', {});
    expect(agent).toMatchObject({ code: 1, stdout: '' });
    expect(agent.stderr).toMatch(/"busy-bot" is an agent, not a human user/);
    const wrong = await hubUser('dave', { WARREN_HUB_ADMIN_KEY: 'not-the-key-0123456789' });
    expect(wrong.stderr, wrong.stderr).toMatch(/refused the admin key \(HTTP 40[13]\)/);
    const missing = await hubUser('dave', { WARREN_HUB_ADMIN_KEY: '' });
    expect(missing.stderr).toMatch(/no hub admin key: set WARREN_HUB_ADMIN_KEY, or run this where the embedded hub keeps its key \(data\/hub-admin-key was not found\)/);
    const gone = await hubUser('dave', { WARREN_HUB_URL: `http://127.0.0.1:${await freePort()}` });
    expect(gone.stderr).toMatch(/no hub answers at http:\/\/127\.0\.0\.1:\d+ .*start one with `npm start` or `warren hub`/);
    for (const r of [agent, wrong, missing, gone]) {
      expect(r.code).toBe(1);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
    }
  });

  it('finds the admin key by itself in the key file beside the configured hub database; the variable wins over it', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'warren-hub-user-'));
    mkdirSync(join(folder, 'data'));
    writeFileSync(join(folder, 'data', 'hub-admin-key'), `${ADMIN}\n`, { mode: 0o600 });
    const found = await hubUser('erin', { WARREN_HUB_ADMIN_KEY: '' }, folder);
    expect(found, found.stderr).toMatchObject({ code: 0, stdout: expect.stringMatching(/^botburrow_agent_[0-9a-f]{64}\n$/) as unknown });
    // A key file holding another hub's key: refused, and the message names the file it came from.
    writeFileSync(join(folder, 'data', 'hub-admin-key'), 'another-hubs-key-0123456789\n');
    const stale = await hubUser('erin', { WARREN_HUB_ADMIN_KEY: '' }, folder);
    expect(stale.stderr).toMatch(/refused the admin key \(HTTP 403\) from data\/hub-admin-key/);
    // The variable, when set, is used instead of the file.
    expect(await hubUser('erin', {}, folder)).toMatchObject({ code: 0 });
  });
});
