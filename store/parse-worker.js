// The entry of a parse thread (store/parse-pool.ts), in plain JavaScript so a thread can start before any
// TypeScript loads. Module hooks do not carry over into worker threads: an installed warren (under node_modules,
// where Node does not strip types) registers here the same hooks bin/warren.js registers for its main thread,
// then loads the parse thread's code (store/parse-worker.ts).
import { register } from 'node:module';
import { sep } from 'node:path';
import { fileURLToPath } from 'node:url';

if (fileURLToPath(import.meta.url).split(sep).includes('node_modules')) register('../bin/strip-types-hooks.js', import.meta.url);
await import('./parse-worker.ts');
