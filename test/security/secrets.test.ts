// Secrets from files: `<NAME>_FILE` and `secrets.dir` keep secrets out of the daemon's environment (which every
// process of its user can read in /proc/<pid>/environ). The loading rules, then a real `warren start` whose
// hub admin key lives only in a file: it runs, and its environment does not hold the key.
import { randomBytes, randomUUID } from 'node:crypto';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { loadWarrenConfig } from '../../services/config.ts';
import { SecretFileError, SecretSource } from '../../services/secrets.ts';
import { startHub } from '../../local-hub/server.ts';
import { makeAgentsDir } from '../support/daemon-harness.ts';
import { hubCaller } from '../support/hub-api.ts';
import { startWarren } from '../support/warren-process.ts';
import { PROCESS_TEST_MS } from '../support/ceilings.ts';

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
});

function secretsDir(files: Record<string, string>): string {
  const dir = join(mkdtempSync(join(tmpdir(), 'warren-secrets-')), 'secrets');
  mkdirSync(dir, { mode: 0o700 });
  for (const [name, value] of Object.entries(files)) writeFileSync(join(dir, name), value, { mode: 0o600 });
  return dir;
}

describe('SecretSource', () => {
  it('reads the environment first, then <NAME>_FILE, then the secrets folder; trailing newlines are not part of a secret', () => {
    const dir = secretsDir({ FROM_DIR: 'dir-value-1234\n', BOTH: 'dir-loses-1234', IN_ENV: 'dir-also-loses', 'not-a-name': 'ignored-value' });
    const named = join(dir, '..', 'named');
    writeFileSync(named, 'file-value-5678\r\n');
    const s = new SecretSource({ env: { IN_ENV: 'env-value-9012', BOTH_FILE: named, NAMED_FILE: named, EMPTY: '', EMPTY_FILE: named }, dir });
    expect(s.get('IN_ENV')).toBe('env-value-9012');
    expect(s.get('FROM_DIR')).toBe('dir-value-1234');
    expect(s.get('BOTH')).toBe('file-value-5678');
    expect(s.get('NAMED')).toBe('file-value-5678');
    expect(s.get('EMPTY')).toBe('file-value-5678'); // an empty variable counts as unset
    expect(s.get('ABSENT')).toBeUndefined();
    expect(s.get('not-a-name')).toBeUndefined();
    // The redactor learns every value read from a file, whatever its name.
    expect(s.fileValues().sort()).toEqual(['dir-also-loses', 'dir-value-1234', 'file-value-5678'].sort());
  });

  it('lists the folder and its files as secret paths, and a _FILE only once its name is asked for', () => {
    const dir = secretsDir({ A_SECRET: 'aaaaaaaaaa' });
    const other = join(dir, '..', 'other');
    writeFileSync(other, 'bbbbbbbbbb');
    const s = new SecretSource({ env: { OTHER_FILE: other }, dir });
    expect(s.paths()).toEqual([dir, join(dir, 'A_SECRET')]);
    expect(s.get('OTHER')).toBe('bbbbbbbbbb');
    expect(s.paths()).toEqual([dir, join(dir, 'A_SECRET'), other]);
  });

  it('a _FILE of another program that names no file is no error; one the daemon asks for is explained', () => {
    const s = new SecretSource({ env: { TF_CLI_CONFIG_FILE: '/nonexistent/.terraformrc', WARREN_HUB_ADMIN_KEY_FILE: '/nonexistent/admin' } });
    expect(s.get('WARREN_HUB_ADMIN_KEY')).toBeUndefined();
    expect(s.whyMissing('WARREN_HUB_ADMIN_KEY')).toBe('WARREN_HUB_ADMIN_KEY_FILE names /nonexistent/admin, which is missing, unreadable, empty or larger than 65536 bytes');
    expect(s.whyMissing('TF_CLI_CONFIG')).toMatch(/names \/nonexistent\/.terraformrc/);
    expect(s.whyMissing('UNSET')).toBeUndefined();
    expect(() => new SecretSource({ env: {}, dir: '/nonexistent/secrets' })).toThrow(SecretFileError);
  });

  it('reread picks up a file added, changed or removed since, and an unreadable folder changes nothing', () => {
    const dir = secretsDir({ OLD_KEY: 'old-value-1234', GONE_KEY: 'gone-value-1234' });
    const named = join(dir, '..', 'named');
    writeFileSync(named, 'named-before-1234');
    const s = new SecretSource({ env: { NAMED_FILE: named }, dir });
    expect(s.get('NEW_KEY')).toBeUndefined();
    writeFileSync(join(dir, 'NEW_KEY'), 'new-value-5678\n');
    writeFileSync(join(dir, 'OLD_KEY'), 'old-value-changed');
    rmSync(join(dir, 'GONE_KEY'));
    writeFileSync(named, 'named-after-5678');
    expect(s.get('NEW_KEY')).toBeUndefined(); // nothing changes until asked to
    s.reread();
    expect([s.get('NEW_KEY'), s.get('OLD_KEY'), s.get('GONE_KEY'), s.get('NAMED')]).toEqual(['new-value-5678', 'old-value-changed', undefined, 'named-after-5678']);
    expect(s.fileValues().sort()).toEqual(['named-after-5678', 'new-value-5678', 'old-value-changed']);
    expect(s.paths()).toContain(join(dir, 'NEW_KEY'));

    renameSync(dir, `${dir}-moved`);
    expect(() => s.reread()).toThrow(SecretFileError);
    expect(s.get('NEW_KEY')).toBe('new-value-5678');
  });

  it('secrets.dir in warren.yaml is relative to the file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'warren-cfg-'));
    writeFileSync(join(dir, 'warren.yaml'), 'secrets: {dir: ./private}\n');
    expect(loadWarrenConfig(join(dir, 'warren.yaml'), {}).secrets.dir).toBe(join(dir, 'private'));
  });
});

describe('a daemon whose secrets are in files', { timeout: PROCESS_TEST_MS }, () => {
  it('starts with the hub admin key only in WARREN_HUB_ADMIN_KEY_FILE, and its environment does not hold the key', async () => {
    const adminKey = `admin-${randomBytes(16).toString('hex')}`;
    const hub = await startHub({ dbPath: ':memory:', port: 0, adminKey });
    cleanups.push(() => hub.close());
    const dir = secretsDir({ WARREN_HUB_ADMIN_KEY: `${adminKey}\n` });
    const daemon = startWarren({
      hubUrl: hub.url,
      adminKey: '', // nothing in the environment: the file is the only source
      redisUrl: inject('redisUrl'),
      prefix: `sec-${randomUUID().slice(0, 8)}`,
      agentsDir: makeAgentsDir({}, { withGreeter: true }),
      env: { WARREN_HUB_ADMIN_KEY_FILE: join(dir, 'WARREN_HUB_ADMIN_KEY'), WARREN_LOG_LEVEL: 'info' },
      sections: ['executors: {cli: {run_as: none}}'],
    });
    cleanups.push(async () => {
      daemon.kill('SIGKILL');
      await daemon.exited;
    });
    await daemon.waitForLine(/warren is running/);
    // It used the key: the greeter was registered on the hub with it.
    await expect(hubCaller(hub.url).get('/agents/greeter', adminKey)).resolves.toMatchObject({ name: 'greeter' });
    expect(readFileSync(`/proc/${daemon.pid}/environ`, 'latin1')).not.toContain(adminKey);
    expect(daemon.lines.join('\n')).not.toContain(adminKey);
  });

  it('a secret file the CLI user could read is a warning at start', async () => {
    expect(process.getuid?.()).toBe(0);
    const hub = await startHub({ dbPath: ':memory:', port: 0, adminKey: `admin-${randomUUID()}` });
    cleanups.push(() => hub.close());
    const dir = secretsDir({ LOOSE_CRED: 'loose-value-123456' });
    chmodSync(dir, 0o755);
    chmodSync(join(dir, 'LOOSE_CRED'), 0o644);
    chmodSync(join(dir, '..'), 0o755);
    const daemon = startWarren({ hubUrl: hub.url, adminKey: hub.adminKey, redisUrl: inject('redisUrl'), prefix: `sec-${randomUUID().slice(0, 8)}`, agentsDir: makeAgentsDir({}, { withGreeter: true }), sections: [`secrets: {dir: "${dir}"}`] });
    cleanups.push(async () => {
      daemon.kill('SIGKILL');
      await daemon.exited;
    });
    await daemon.waitForLine(/warren is running/);
    expect(daemon.lines.some((l) => l.includes(`secret file ${join(dir, 'LOOSE_CRED')} is readable by warren-agent`))).toBe(true);
    expect(daemon.lines.some((l) => l.includes(`secret file ${dir} is readable by warren-agent`))).toBe(true);
  });
});
