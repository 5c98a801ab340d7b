#!/usr/bin/env node
// Forks one grandchild and prints both pids, then waits, so a test can read /proc/<pid>/environ of each.
import { spawn } from 'node:child_process';
const kid = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 5000)'], { stdio: 'ignore' });
console.log(JSON.stringify({ pids: [process.pid, kid.pid] }));
globalThis.setTimeout(() => process.exit(0), 5000);
