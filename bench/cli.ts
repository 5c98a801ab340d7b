// CLI executors: what supervising a coding-agent CLI costs per activation (a fake CLI that answers at once,
// against the same script spawned bare), and how long from a deadline until the whole process group is gone
// (a fake CLI that ignores SIGTERM and leaves a grandchild).
import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { supervise } from '../executors/cli/supervisor.ts';
import { printTable, round, summarize, writeResults } from './support/stats.ts';

const RUNS = 200;
const KILLS = 5;
const GRACE_MS = 1_000;
const DEADLINE_MS = 300;

function script(dir: string, name: string, body: string): string {
  const file = join(dir, name);
  writeFileSync(file, `#!/bin/sh\n${body}\n`);
  chmodSync(file, 0o755);
  return file;
}

const ENV = { PATH: process.env.PATH ?? '/usr/bin:/bin' };

function bare(command: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, [], { stdio: ['ignore', 'pipe', 'pipe'], env: ENV });
    child.stdout.resume();
    child.stderr.resume();
    child.once('error', reject);
    child.once('close', () => resolve());
  });
}

/** Whether any live process (zombies do not count: they are dead, waiting to be reaped) is in the group. */
function groupAlive(pgid: number): boolean {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(fields[2]) === pgid && fields[0] !== 'Z') return true; // state, ppid, pgrp
    } catch {
      // the process ended while we looked
    }
  }
  return false;
}

export async function cli(): Promise<Record<string, unknown>> {
  const dir = mkdtempSync(join(tmpdir(), 'warren-bench-cli-'));
  const answer = script(dir, 'fake-cli', `echo '{"type":"result","subtype":"success","is_error":false,"result":"done"}'`);
  const stubborn = script(dir, 'stubborn-cli', `trap '' TERM\nsleep 30 &\nsleep 30\nwait`);

  const supervised: number[] = [];
  const raw: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    let t = performance.now();
    await bare(answer);
    raw.push(performance.now() - t);
    t = performance.now();
    let lines = 0;
    await supervise({ command: answer, args: [], cwd: dir, env: ENV, deadlineMs: 10_000, idleMs: 10_000, graceMs: GRACE_MS, onLine: () => void lines++ });
    supervised.push(performance.now() - t);
    if (lines !== 1) throw new Error(`the fake CLI's answer was not read (${lines} lines)`);
  }

  const kills: number[] = [];
  for (let i = 0; i < KILLS; i++) {
    const started = performance.now();
    const exit = await supervise({ command: stubborn, args: [], cwd: dir, env: ENV, deadlineMs: DEADLINE_MS, idleMs: 60_000, graceMs: GRACE_MS, onLine: () => undefined });
    if (exit.stoppedBy !== 'deadline' || exit.pid === undefined) throw new Error(`expected a deadline stop, got ${exit.stoppedBy ?? 'a normal exit'}`);
    while (groupAlive(exit.pid)) await new Promise((r) => setTimeout(r, 5));
    kills.push(performance.now() - started - DEADLINE_MS);
  }

  const s = summarize(supervised);
  const r = summarize(raw);
  const k = summarize(kills);
  const figures = {
    runs: RUNS,
    supervised_ms: { p50: round(s.p50, 2), p95: round(s.p95, 2) },
    bare_spawn_ms: { p50: round(r.p50, 2), p95: round(r.p95, 2) },
    overhead_ms: { p50: round(s.p50 - r.p50, 2), p95: round(s.p95 - r.p95, 2) },
    grace_ms: GRACE_MS,
    kill_ms: { p50: round(k.p50), max: round(k.max) },
  };
  printTable(`cli — a fake CLI that answers at once (${RUNS} runs); a SIGTERM-ignoring CLI with a grandchild (${KILLS} deadlines, grace ${GRACE_MS} ms)`, [
    ['supervised run p50 / p95 (ms)', `${figures.supervised_ms.p50} / ${figures.supervised_ms.p95}`],
    ['bare spawn of the same script p50 / p95 (ms)', `${figures.bare_spawn_ms.p50} / ${figures.bare_spawn_ms.p95}`],
    ['supervision overhead p50 (ms)', figures.overhead_ms.p50],
    ['deadline → group gone, p50 / max (ms)', `${figures.kill_ms.p50} / ${figures.kill_ms.max}`, `≤ grace + 1000 = ${GRACE_MS + 1000}`],
  ]);
  return figures;
}

if (import.meta.main) console.log(writeResults('cli', await cli()));
