// warren's data files are its user's alone (local-hub/private-files.ts): the decisions as tables, then the hub's and
// memory's databases and the hub's lock on disk, new and as an older warren left them.
import { chmodSync, mkdirSync, mkdtempSync, statSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { closeWorkspaces } from '../executors/cli/workspace.ts';
import { acquireDbLock } from '../local-hub/db-lock.ts';
import { openHubDb } from '../local-hub/db.ts';
import { ownsFolder, passageMode, privateMode, setFolderPassage, unlistableMode, type ModeFix } from '../local-hub/private-files.ts';
import { SqliteMemoryStore } from '../memory/sqlite-memory-store.ts';

const modeOf = (p: string): number => statSync(p).mode & 0o777;

describe('the private mode of a file or folder', () => {
  it.each([
    [0o644, 0o600],
    [0o755, 0o700],
    [0o666, 0o600],
    [0o640, 0o600],
    [0o711, 0o700],
    [0o604, 0o600],
    [0o600, undefined],
    [0o700, undefined],
    [0o400, undefined],
    [0o000, undefined],
    [0o100644, 0o600], // a stat mode, file type bits and all
  ])('%o becomes %s', (mode, want) => {
    expect(privateMode(mode)).toBe(want);
  });

  it.each([
    [0o755, 0o711],
    [0o777, 0o711],
    [0o750, 0o710],
    [0o711, undefined],
    [0o700, undefined],
  ])('a data folder %o others may not list becomes %s', (mode, want) => {
    expect(unlistableMode(mode)).toBe(want);
  });

  it.each([
    [0o700, true, 0o711],
    [0o711, true, undefined],
    [0o711, false, 0o700],
    [0o700, false, undefined],
    [0o710, false, 0o700],
  ])('a data folder %o made passable (%s) becomes %s', (mode, passable, want) => {
    expect(passageMode(mode, passable)).toBe(want);
  });

  const shared = { cwd: '/srv/project', home: '/root', tmp: '/tmp', install: '/opt/warren' };
  it.each([
    ['/srv/project/data', true],
    ['/var/lib/warren', true],
    ['/tmp/warren-x', true],
    ['/opt/warren/data', true],
    ['/srv/project-data', true],
    ['/srv/project', false],
    ['/srv/project/', false],
    ['/srv', false], // holds the working directory
    ['/opt/warren', false], // warren's install: agents' users run its hub MCP server from there
    ['/opt', false],
    ['/root', false],
    ['/tmp', false],
    ['/', false],
  ])('warren closes the folder %s of a data file: %s', (dir, want) => {
    expect(ownsFolder(dir, shared)).toBe(want);
  });
});

describe('data files on disk', () => {
  it("the hub's database, its WAL and SHM, its lock and a new data folder are 0600/0700, whatever the umask", () => {
    const data = join(mkdtempSync(join(tmpdir(), 'warren-modes-')), 'data', 'hub');
    const path = join(data, 'hub.sqlite');
    const saved = process.umask(0); // the worst umask: what warren makes must not depend on it
    try {
      const lock = acquireDbLock(path);
      const db = openHubDb(path);
      db.exec('INSERT INTO communities (name, description, created_at) VALUES (\'x\', NULL, \'now\')');
      expect([data, join(data, '..'), path, `${path}-wal`, `${path}-shm`, `${path}.lock`].map((p) => [p, modeOf(p).toString(8)])).toEqual(
        [[data, '700'], [join(data, '..'), '700'], [path, '600'], [`${path}-wal`, '600'], [`${path}-shm`, '600'], [`${path}.lock`, '600']],
      );
      db.close();
      lock.release();
    } finally {
      process.umask(saved);
    }
  });

  it('an older warren\'s open database, companions and folder are closed as it opens, each change said', () => {
    const data = join(mkdtempSync(join(tmpdir(), 'warren-modes-')), 'data');
    const path = join(data, 'hub.sqlite');
    openHubDb(path).close();
    mkdirSync(data, { recursive: true });
    for (const [p, m] of [[data, 0o755], [path, 0o644]] as const) chmodSync(p, m);
    writeFileSync(`${path}-journal`, '', { mode: 0o644 });
    chmodSync(`${path}-journal`, 0o644);
    const fixes: ModeFix[] = [];
    openHubDb(path, (f) => fixes.push(f)).close();
    expect(fixes).toEqual([
      { path: data, from: 0o755, to: 0o711 }, // unlistable; whether others may pass is the daemon's call at start
      { path, from: 0o644, to: 0o600 },
      { path: `${path}-journal`, from: 0o644, to: 0o600 },
    ]);
    expect([modeOf(data), modeOf(path)]).toEqual([0o711, 0o600]);
  });

  it("a dead hub's 0644 lock taken over is 0600", () => {
    const data = mkdtempSync(join(tmpdir(), 'warren-modes-'));
    const path = join(data, 'hub.sqlite');
    // This host, a pid beyond pid_max: a dead owner, whose lock is taken over.
    writeFileSync(`${path}.lock`, JSON.stringify({ pid: 2 ** 22 + 1, host: hostname() }), { mode: 0o644 });
    chmodSync(`${path}.lock`, 0o644);
    const lock = acquireDbLock(path);
    expect(modeOf(`${path}.lock`)).toBe(0o600);
    lock.release();
  });

  it("memory's database is closed as it opens", async () => {
    const data = join(mkdtempSync(join(tmpdir(), 'warren-modes-')), 'data');
    const path = join(data, 'memory.sqlite');
    await new SqliteMemoryStore(path).close();
    chmodSync(path, 0o644);
    chmodSync(data, 0o755);
    const fixes: ModeFix[] = [];
    await new SqliteMemoryStore(path, (f) => fixes.push(f)).close();
    expect(fixes.map((f) => f.path)).toEqual([data, path]);
    expect([modeOf(data), modeOf(path)]).toEqual([0o711, 0o600]);
    // At daemon start: passable only when agents' workspaces are inside it; a later open keeps what was decided.
    setFolderPassage(data, false);
    expect(modeOf(data)).toBe(0o700);
    await new SqliteMemoryStore(path).close();
    expect(modeOf(data)).toBe(0o700);
    setFolderPassage(data, true);
    await new SqliteMemoryStore(path).close();
    expect(modeOf(data)).toBe(0o711);
  });

  it('workspaces an older warren left open are closed at start: passable roots for isolated agents, else private', async () => {
    const root = join(mkdtempSync(join(tmpdir(), 'warren-modes-')), 'workspaces');
    for (const d of [root, join(root, 'coder'), join(root, '.state'), join(root, '.state', 'coder')]) {
      mkdirSync(d, { recursive: true });
      chmodSync(d, 0o755);
    }
    writeFileSync(join(root, 'stray.txt'), 'not a workspace');
    expect((await closeWorkspaces(root, true)).map((f) => [f.path, f.to.toString(8)])).toEqual([
      [root, '711'],
      [join(root, 'coder'), '700'],
      [join(root, '.state'), '711'],
      [join(root, '.state', 'coder'), '700'],
    ]);
    expect(await closeWorkspaces(root, true)).toEqual([]);
    expect((await closeWorkspaces(root, false)).map((f) => [f.path, f.to.toString(8)])).toEqual([
      [root, '700'],
      [join(root, '.state'), '700'],
    ]);
    expect(await closeWorkspaces(join(root, 'missing'), true)).toEqual([]);
    // Back to run_as: the roots are opened to passing again, which closes nothing, so nothing is said.
    expect(await closeWorkspaces(root, true)).toEqual([]);
    expect([modeOf(root), modeOf(join(root, '.state'))]).toEqual([0o711, 0o711]);
  });
});
