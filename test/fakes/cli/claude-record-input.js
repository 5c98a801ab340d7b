#!/usr/bin/env node
// A fake `claude` that keeps everything it was given as input (argv, stdin and the system prompt file after
// --append-system-prompt-file) in received.json in its working directory, for a test to search, and answers in
// claude's stream-json result shape with a fixed text (so its answer carries nothing it was given).
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
const argv = process.argv.slice(2);
const fileAfter = (flag) => (argv.includes(flag) ? readFileSync(argv[argv.indexOf(flag) + 1], 'utf8') : '');
let stdin = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (d) => (stdin += d));
process.stdin.on('end', () => {
  writeFileSync(join(process.cwd(), 'received.json'), JSON.stringify({ argv, stdin, system: fileAfter('--append-system-prompt-file') }));
  const result = { type: 'result', subtype: 'success', is_error: false, terminal_reason: 'completed', num_turns: 1, result: 'Noted.', usage: { input_tokens: 3, output_tokens: 2 } };
  console.log(JSON.stringify(result));
});
