#!/usr/bin/env node
// A fake `claude` whose answer is as large as its task asks ("BYTES <n>" in the task on stdin), in claude's
// stream-json result shape, written as one line; then it exits.
let task = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (d) => (task += d));
process.stdin.on('end', () => {
  const size = Number(/BYTES (\d+)/.exec(task)?.[1] ?? 1024);
  const result = { type: 'result', subtype: 'success', is_error: false, terminal_reason: 'completed', num_turns: 1, result: 'y'.repeat(size), usage: { input_tokens: 3, output_tokens: 2 } };
  process.stdout.write(`${JSON.stringify(result)}\n`);
});
