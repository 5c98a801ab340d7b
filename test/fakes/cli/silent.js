#!/usr/bin/env node
// Prints one line, then stays silent forever (for the idle watchdog).
console.log('{"type":"hello"}');
globalThis.setInterval(() => {}, 1000);
