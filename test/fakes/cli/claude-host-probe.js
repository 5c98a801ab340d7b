#!/usr/bin/env node
// A fake `claude` playing a hostile agent on the host (issue 26, items 3 and 4). It tries to read every path named
// in its task (`PROBE=/a:/b`: warren's databases, another agent's workspace) and records what the kernel said;
// then it leaves a process behind the way a daemonising tool does: `setsid` (a new session, so outside the
// CLI's process group, reparented to init once setsid's own child exits), sleeping for ten minutes. The
// leftover's pid goes to `leftover.pid` in the workspace. With STAY in the task the CLI itself then waits to be
// killed (a run the daemon's shutdown or a kill -9 interrupts); otherwise it answers in claude's stream-json.
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';

const task = readFileSync(0, 'utf8');
const paths = (/PROBE=(\S+)/.exec(task)?.[1] ?? '').split(':').filter(Boolean);
const probes = {};
for (const path of paths) {
  try {
    if (statSync(path).isDirectory()) readdirSync(path);
    else readFileSync(path);
    probes[path] = 'read';
  } catch (err) {
    probes[path] = err.code ?? String(err);
  }
}

// umask 077 or not, this is what a tool the agent runs would leave in its workspace.
spawn('setsid', ['sh', '-c', 'echo $$ > leftover.pid.tmp && mv leftover.pid.tmp leftover.pid && exec sleep 600'], { detached: true, stdio: 'ignore' }).unref();
const started = Date.now();
while (!existsSync('leftover.pid') && Date.now() - started < 10_000) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20);
const leftover = Number(readFileSync('leftover.pid', 'utf8').trim());

if (/\bSTAY\b/.test(task)) {
  globalThis.setInterval(() => undefined, 60_000);
} else {
  const report = { uid: process.getuid(), probes, leftover };
  console.log(JSON.stringify({ type: 'system', subtype: 'init', claude_code_version: 'fake-probe', model: 'none', mcp_servers: [] }));
  console.log(JSON.stringify({ type: 'result', subtype: 'success', is_error: false, terminal_reason: 'completed', num_turns: 1, result: JSON.stringify(report), usage: { input_tokens: 1, output_tokens: 1 } }));
}
