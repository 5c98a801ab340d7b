#!/usr/bin/env node
// A badly behaved CLI: ignores SIGTERM, forks two grandchildren that ignore it too, reports every pid on
// stdout, then stays alive. Only a SIGKILL to the whole process group ends it.
import { spawn } from 'node:child_process';
process.on('SIGTERM', () => {});
const stubborn = 'process.on("SIGTERM", () => {}); globalThis.setInterval(() => {}, 1000);';
const kids = [0, 1].map(() => spawn(process.execPath, ['-e', stubborn], { stdio: ['ignore', 'inherit', 'ignore'] }));
console.log(JSON.stringify({ pids: [process.pid, ...kids.map((k) => k.pid)] }));
globalThis.setInterval(() => {}, 1000);
