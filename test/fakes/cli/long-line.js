#!/usr/bin/env node
// Writes one line of FAKE_LINE_BYTES bytes (default 10 MB) with no newline yet, then hangs.
const size = Number(process.env.FAKE_LINE_BYTES ?? 10 * 1024 * 1024);
console.log('{"type":"before"}');
process.stdout.write('x'.repeat(size));
globalThis.setInterval(() => {}, 1000);
