#!/usr/bin/env node
// Entry point of the `warren` command. It loads the TypeScript sources directly (Node ≥ 22.18 strips
// types natively), so there is no build step. On an older Node (e.g. a system Node 20 picked up by a
// global shebang) it re-runs itself on the Node 24 that the project pins as a devDependency.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const [major, minor] = process.versions.node.split('.').map(Number);
const canStripTypes = major > 22 || (major === 22 && minor >= 18);

if (!canStripTypes) {
  const pinned = join(root, 'node_modules', 'node', 'bin', 'node');
  if (!existsSync(pinned)) {
    console.error(`warren needs Node >= 22.18 (running ${process.version}); run 'npm ci' to install the pinned Node 24.`);
    process.exit(1);
  }
  const child = spawn(pinned, [fileURLToPath(import.meta.url), ...process.argv.slice(2)], { stdio: 'inherit' });
  // Forward stop signals so the real process shuts down cleanly; this one just waits for it.
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(sig, () => child.kill(sig));
  child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
} else {
  const { main } = await import('../daemon/cli.ts');
  await main(process.argv);
}
