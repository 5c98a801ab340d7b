#!/usr/bin/env node
// A fake `claude` that takes 1.5 s, then answers in claude's stream-json result shape (for concurrency tests).
globalThis.setTimeout(() => {
  console.log(JSON.stringify({ type: 'result', subtype: 'success', is_error: false, terminal_reason: 'completed', num_turns: 1, result: `slow answer from pid ${process.pid}`, usage: { input_tokens: 3, output_tokens: 4 } }));
}, 1_500);
