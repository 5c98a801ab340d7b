#!/usr/bin/env node
// Echoes stdin back as one JSON line once stdin ends, with argv; proves the prompt arrived whole.
let text = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (d) => (text += d));
process.stdin.on('end', () => {
  console.log(JSON.stringify({ stdin: text, argv: process.argv.slice(2), cwd: process.cwd() }));
  process.stderr.write('done\n');
});
