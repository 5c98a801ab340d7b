// The watch page's files: HTML and CSS as they are, the browser script as TypeScript with its types stripped
// (Node's own stripper, the same one that runs this hub), read once and kept in memory.
import { readFileSync } from 'node:fs';
import { stripTypeScriptTypes } from 'node:module';

interface Asset {
  type: string;
  body: Buffer;
}

const here = new URL('./', import.meta.url);
const cache = new Map<string, Asset>();

const SOURCES: Record<string, { file: string; type: string; strip?: boolean }> = {
  '/': { file: 'page.html', type: 'text/html; charset=utf-8' },
  '/watch/style.css': { file: 'style.css', type: 'text/css; charset=utf-8' },
  '/watch/app.js': { file: 'app.ts', type: 'text/javascript; charset=utf-8', strip: true },
};

/** The asset served at `path`, or undefined when there is none. */
export function watchAsset(path: string): Asset | undefined {
  const known = cache.get(path);
  if (known) return known;
  const source = SOURCES[path];
  if (!source) return undefined;
  const text = readFileSync(new URL(source.file, here), 'utf8');
  const asset = { type: source.type, body: Buffer.from(source.strip ? stripTypeScriptTypes(text) : text) };
  cache.set(path, asset);
  return asset;
}
