// Where the hub's admin key comes from when nobody sets it (services/hub-admin-key.ts): kept in data/hub-admin-key
// (mode 0600) beside the hub's database and reused; the variable wins; an in-memory hub's key is for one run. And
// what `warren status` says when it has no key for the budgets.
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, inject, it } from 'vitest';
import { WarrenConfigSchema } from '../services/config.ts';
import { AdminKeyFileError, adminKeyFile, findAdminKey, keepAdminKey, missingAdminKeyHint } from '../services/hub-admin-key.ts';
import { SecretSource } from '../services/secrets.ts';
import { makeAgentsDir } from './support/daemon-harness.ts';

const exec = promisify(execFile);

function hubIn(db: string): ReturnType<typeof WarrenConfigSchema.parse>['hub'] {
  return WarrenConfigSchema.parse({ hub: { db } }).hub;
}
const noVariable = new SecretSource({ env: {} });

describe('the hub admin key file', () => {
  it('is made once (mode 0600, in a folder made 0700), then reused; the variable wins; :memory: keeps nothing', () => {
    const dir = join(mkdtempSync(join(tmpdir(), 'warren-admin-key-')), 'data');
    const hub = hubIn(join(dir, 'hub.sqlite'));
    expect(adminKeyFile(hub.db)).toBe(join(dir, 'hub-admin-key'));
    expect(findAdminKey(hub, noVariable)).toBeUndefined();
    const first = keepAdminKey(hub, noVariable);
    expect(first).toMatchObject({ from: 'file', path: join(dir, 'hub-admin-key'), created: true });
    expect(statSync(join(dir, 'hub-admin-key')).mode & 0o777).toBe(0o600);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(readFileSync(join(dir, 'hub-admin-key'), 'utf8')).toBe(`${first.key}\n`);
    expect(keepAdminKey(hub, noVariable)).toEqual({ ...first, created: false });
    expect(findAdminKey(hub, noVariable)).toEqual({ key: first.key, from: 'file', path: first.path });
    const set = new SecretSource({ env: { WARREN_HUB_ADMIN_KEY: 'chosen-key-0123456789' } });
    expect(keepAdminKey(hub, set)).toEqual({ key: 'chosen-key-0123456789', from: 'env', created: false });
    expect(keepAdminKey(hubIn(':memory:'), noVariable)).toMatchObject({ from: 'generated', created: true });
    expect(keepAdminKey(hubIn(':memory:'), noVariable).path).toBeUndefined();
    expect(adminKeyFile(':memory:')).toBeUndefined();
  });

  it('an empty key file is an error naming the file, not a silent new key', () => {
    const dir = mkdtempSync(join(tmpdir(), 'warren-admin-key-'));
    writeFileSync(join(dir, 'hub-admin-key'), '\n', { mode: 0o600 });
    const hub = hubIn(join(dir, 'hub.sqlite'));
    expect(() => keepAdminKey(hub, noVariable)).toThrow(AdminKeyFileError);
    expect(() => findAdminKey(hub, noVariable)).toThrow(`hub admin key file ${join(dir, 'hub-admin-key')}: it is empty`);
    expect(missingAdminKeyHint(hubIn(join(dir, 'data', 'hub.sqlite')), dir)).toBe('no hub admin key: set WARREN_HUB_ADMIN_KEY, or run this where the embedded hub keeps its key (data/hub-admin-key was not found)');
  });
});

describe('warren status without the admin key', () => {
  it('says why the budgets are `-` and what to set', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'warren-status-key-'));
    mkdirSync(join(folder, 'data'));
    const agents = makeAgentsDir({});
    writeFileSync(join(folder, 'warren.yaml'), `redis: {url: "${inject('redisUrl')}", prefix: status-key}\nstore: {path: "${agents}"}\n`);
    const { stdout } = await exec(process.execPath, [resolve('bin/warren.js'), 'status'], { cwd: folder, env: { ...process.env, WARREN_HUB_ADMIN_KEY: '', WARREN_HUB_URL: '', REDIS_URL: '', WARREN_STORE: '' } });
    expect(stdout).toMatch(/^greeter .* - /m);
    expect(stdout).toContain('budget: - no hub admin key: set WARREN_HUB_ADMIN_KEY, or run this where the embedded hub keeps its key (data/hub-admin-key was not found)');
  });
});
