#!/usr/bin/env node
// A fake `claude` that never answers: it forks a child into its process group, writes both pids to hang.pid in
// its working directory (the agent's workspace), and waits until it is killed (for cancel tests).
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
const kid = spawn(process.execPath, ['-e', 'globalThis.setInterval(() => {}, 1000);'], { stdio: 'ignore' });
writeFileSync('hang.pid', JSON.stringify({ pid: process.pid, kid: kid.pid }));
globalThis.setInterval(() => {}, 1000);
