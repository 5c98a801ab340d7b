#!/usr/bin/env node
// A fake `claude` whose answer is its own environment (read from /proc/self/environ, as any process on the
// machine could read it from /proc/<pid>/environ), in claude's stream-json result shape. The daemon posts
// the answer, so a test can check on the hub which variables a CLI child received.
import { readFileSync } from 'node:fs';
const environ = readFileSync('/proc/self/environ', 'utf8').split('\0').filter(Boolean);
const result = { type: 'result', subtype: 'success', is_error: false, terminal_reason: 'completed', num_turns: 1, result: environ.join('\n'), usage: { input_tokens: 1, output_tokens: 1 } };
console.log(JSON.stringify(result));
