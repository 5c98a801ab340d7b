#!/usr/bin/env node
// A fake `aider` that checks the documented unattended flags, reads the task from --message-file and the
// system prompt from --read, and prints a golden fixture of aider's documented text output. It exits 0
// even on a model error, as aider does after --message; only a startup error exits 1. The scenario is named
// in the task (`scenario:<name>`). Real aider is not installed here.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const args = process.argv.slice(2);
if (args[0] === '--version') {
  console.log('aider 0.86.1');
  process.exit(0);
}
for (const flag of ['--yes-always', '--no-auto-commits', '--no-stream', '--no-pretty', '--no-check-update', '--analytics-disable']) {
  if (!args.includes(flag)) {
    process.stderr.write(`aider: error: missing ${flag}\n`);
    process.exit(2);
  }
}
const valueOf = (flag) => {
  const i = args.indexOf(flag);
  return i === -1 ? undefined : args[i + 1];
};
const task = readFileSync(valueOf('--message-file') ?? '/nonexistent', 'utf8');
readFileSync(valueOf('--read') ?? '/nonexistent', 'utf8'); // the system prompt file must exist
const scenario = /scenario:([\w-]+)/.exec(task)?.[1] ?? 'answer';
if (scenario === 'startup') {
  process.stderr.write('aider: error: unrecognized arguments: --bogus\n');
  process.exit(1);
}
const fixture = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'fixtures', 'cli', `aider-${scenario}.txt`);
process.stdout.write(readFileSync(fixture, 'utf8'));
