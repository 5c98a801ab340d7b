#!/usr/bin/env node
// A fake `claude` that answers with what it was given, in claude's stream-json result shape: the task (stdin),
// the system prompt (the file after --append-system-prompt-file) and the MCP servers (the --mcp-config file).
import { readFileSync } from 'node:fs';
const argv = process.argv.slice(2);
const fileAfter = (flag) => (argv.includes(flag) ? readFileSync(argv[argv.indexOf(flag) + 1], 'utf8') : '');
let task = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (d) => (task += d));
process.stdin.on('end', () => {
  const mcp = fileAfter('--mcp-config');
  const answer = { task, system: fileAfter('--append-system-prompt-file'), mcp_servers: Object.keys(mcp ? JSON.parse(mcp).mcpServers : {}) };
  const result = { type: 'result', subtype: 'success', is_error: false, terminal_reason: 'completed', num_turns: 1, result: JSON.stringify(answer), usage: { input_tokens: 3, output_tokens: 2 } };
  console.log(JSON.stringify(result));
});
