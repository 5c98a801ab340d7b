#!/usr/bin/env node
// A fake `goose` that checks the documented `goose run` flags, reads the prompt from stdin (`-i -`) and
// replays a golden fixture of goose's documented stream-json output. The scenario is named in the prompt
// (`scenario:<name>`). Real goose is not installed here; this tests warren against the documented format.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const args = process.argv.slice(2);
if (args[0] === '--version') {
  console.log('1.9.0');
  process.exit(0);
}
const need = [['run'], ['-i', '-'], ['--quiet'], ['--output-format', 'stream-json'], ['--no-profile'], ['--name'], ['--max-turns']];
for (const flag of need) {
  const i = args.indexOf(flag[0]);
  if (i === -1 || (flag[1] && args[i + 1] !== flag[1])) {
    process.stderr.write(`error: missing or wrong ${flag.join(' ')}\n`);
    process.exit(2);
  }
}
let prompt = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (d) => (prompt += d));
process.stdin.on('end', () => {
  const scenario = /scenario:([\w-]+)/.exec(prompt)?.[1] ?? 'answer';
  if (scenario === 'setup') {
    process.stderr.write('Error: No provider configured. Run `goose configure` first\n');
    process.exit(1);
  }
  const fixture = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'fixtures', 'cli', `goose-${scenario}.jsonl`);
  process.stdout.write(readFileSync(fixture, 'utf8'));
});
