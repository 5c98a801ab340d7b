#!/usr/bin/env node
// Entry point of the `warren` command. It loads the TypeScript sources directly (Node strips the types), so there
// is no build step. In a clone, on a Node too old to strip types (e.g. a system Node 20 picked up by a global
// shebang), it re-runs itself on the Node 24 that the project pins as a devDependency. Installed as a package
// (under node_modules, where Node refuses to strip types), it strips them through module hooks (Node >= 22.13);
// its dependencies need Node >= 22.15 (package.json engines: the OpenTelemetry packages).
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import * as nodeModule from 'node:module';
import { dirname, join, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { heapSettings } from './heap-settings.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const [major, minor] = process.versions.node.split('.').map(Number);
const installed = root.split(sep).includes('node_modules');
const atLeast = (maj, min) => major > maj || (major === maj && minor >= min);
const canStripTypes = installed ? atLeast(22, 15) && typeof nodeModule.stripTypeScriptTypes === 'function' && typeof nodeModule.register === 'function' : atLeast(22, 18);

// `warren start` runs the daemon with warren's memory settings (bin/heap-settings.js: Node's defaults let the
// heap grow to ~4× what is live, measured in bench/concurrency.ts). Applied by re-running this file with them, once
// (WARREN_HEAP_SETTINGS marks it); WARREN_HEAP_SETTINGS=off keeps Node's defaults, and a flag the operator already
// gave (NODE_OPTIONS or the command line) wins over ours.
const heap = process.argv[2] === 'start' && process.env.WARREN_HEAP_SETTINGS === undefined ? heapSettings() : undefined;
const given = `${process.env.NODE_OPTIONS ?? ''} ${process.execArgv.join(' ')}`;
const heapArgv = (heap?.execArgv ?? []).filter((flag) => !given.includes(flag.split('=')[0]));
const heapEnv = heap ? { ...Object.fromEntries(Object.entries(heap.env).filter(([k]) => process.env[k] === undefined)), WARREN_HEAP_SETTINGS: 'applied' } : {};

if (!canStripTypes) {
  const pinned = join(root, 'node_modules', 'node', 'bin', 'node');
  if (installed || !existsSync(pinned)) {
    console.error(
      installed
        ? `warren needs Node >= 22.15 (running ${process.version}): install a newer Node (Node 24 LTS is the tested one).`
        : `warren needs Node >= 22.18 (running ${process.version}); run 'npm ci' to install the pinned Node 24.`,
    );
    process.exit(1);
  }
  // The real process gets its own process group, so a Ctrl-C reaches it once (forwarded from here) rather than
  // twice (from the terminal and from here), which it would take as a second, hurried stop.
  const child = spawn(pinned, [...heapArgv, fileURLToPath(import.meta.url), ...process.argv.slice(2)], { stdio: 'inherit', detached: true, env: { ...process.env, ...heapEnv } });
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(sig, () => child.kill(sig));
  child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
} else if (heap && typeof process.execve === 'function') {
  // Replaces this process (same pid, so service managers and pid files see the daemon itself).
  process.execve(process.execPath, [process.execPath, ...process.execArgv, ...heapArgv, fileURLToPath(import.meta.url), ...process.argv.slice(2)], { ...process.env, ...heapEnv });
} else {
  if (installed) nodeModule.register('./strip-types-hooks.js', import.meta.url);
  const { main } = await import('../daemon/cli.ts');
  await main(process.argv);
}
