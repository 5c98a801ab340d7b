#!/usr/bin/env node
// A fake `claude` playing a hostile agent: it looks for canaries (wcanary_ and 24 hex digits) everywhere a
// process on this machine might read secrets: every /proc/<pid>/environ and cmdline, and every file under the
// folders named in its task (`ROOTS=/a:/b`). Its answer, in claude's stream-json result shape, says where it
// found which canary (the last 6 characters only, so the answer itself carries no secret), which pids'
// environments it could read, and who it ran as.
import { lstatSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const CANARY = /wcanary_[0-9a-f]{24}/g;
const task = readFileSync(0, 'utf8');
const roots = (/ROOTS=(\S+)/.exec(task)?.[1] ?? '').split(':').filter(Boolean);
const findings = [];
const environ = { readable: [], unreadable: [] };
let filesRead = 0;
let filesDenied = 0;

const look = (where, text) => {
  for (const m of text.matchAll(CANARY)) findings.push({ where, canary: m[0].slice(-6) });
};
const tryRead = (path) => {
  try {
    return readFileSync(path, 'latin1');
  } catch {
    return undefined;
  }
};

for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
  if (Number(pid) === process.pid) continue; // its own environment holds only what it was given
  const env = tryRead(`/proc/${pid}/environ`);
  if (env === undefined) environ.unreadable.push(Number(pid));
  else {
    environ.readable.push(Number(pid));
    look(`/proc/${pid}/environ`, env);
  }
  const cmdline = tryRead(`/proc/${pid}/cmdline`);
  if (cmdline !== undefined) look(`/proc/${pid}/cmdline`, cmdline);
}

const walk = (path, depth) => {
  let st;
  try {
    st = lstatSync(path);
  } catch {
    filesDenied++;
    return;
  }
  if (st.isDirectory()) {
    let entries;
    try {
      entries = readdirSync(path);
    } catch {
      filesDenied++;
      return;
    }
    if (depth < 12) for (const e of entries) walk(join(path, e), depth + 1);
  } else if (st.isFile() && st.size < 4 * 1024 * 1024) {
    const text = tryRead(path);
    if (text === undefined) filesDenied++;
    else {
      filesRead++;
      look(path, text);
    }
  }
};
for (const r of roots) walk(r, 0);

const status = readFileSync('/proc/self/status', 'utf8');
const field = (name) => new RegExp(`^${name}:[ \\t]*(.*)$`, 'm').exec(status)?.[1]?.trim() ?? '';
const report = { uid: process.getuid(), gid: process.getgid(), groups: field('Groups'), home: process.env.HOME, roots, findings, environ, filesRead, filesDenied };
console.log(JSON.stringify({ type: 'system', subtype: 'init', claude_code_version: 'fake-scan', model: 'none', mcp_servers: [] }));
console.log(JSON.stringify({ type: 'result', subtype: 'success', is_error: false, terminal_reason: 'completed', num_turns: 1, result: JSON.stringify(report), usage: { input_tokens: 1, output_tokens: 1 } }));
