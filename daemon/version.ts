// warren's version, as its package.json says (npm packs that file whatever `files` lists): `warren --version`, and
// the name warren gives itself to the servers it talks to.
import { readFileSync } from 'node:fs';

export const WARREN_VERSION: string = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;
