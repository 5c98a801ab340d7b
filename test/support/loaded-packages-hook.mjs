// Preloaded with `--import` into a process under test: records every npm package a module was loaded from, and
// writes their names (one per line) to $LOADED_PACKAGES_FILE as the process exits. Plain JS: it runs before any
// TypeScript does.
import { registerHooks } from 'node:module';
import { writeFileSync } from 'node:fs';

const packages = new Set();
registerHooks({
  load(url, context, next) {
    const m = /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url);
    if (m) packages.add(m[1]);
    return next(url, context);
  },
});
process.on('exit', () => {
  if (process.env.LOADED_PACKAGES_FILE) writeFileSync(process.env.LOADED_PACKAGES_FILE, [...packages].sort().join('\n'));
});
