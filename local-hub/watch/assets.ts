// The watch page's files: HTML and CSS as they are, the browser script as TypeScript with its types stripped
// (Node's own stripper, the same one that runs this hub), read once and kept in memory. Vendor scripts come from
// their npm packages as published (markdown-it's browser build: Markdown to HTML with raw HTML turned off).
import { readFileSync } from 'node:fs';
import { createRequire, stripTypeScriptTypes } from 'node:module';
import { pathToFileURL } from 'node:url';

interface Asset {
  type: string;
  body: Buffer;
}

const here = new URL('./', import.meta.url);
const cache = new Map<string, Asset>();

const vendor = (specifier: string): string => pathToFileURL(createRequire(import.meta.url).resolve(specifier)).href;

const SOURCES: Record<string, { file: string; type: string; strip?: boolean }> = {
  '/': { file: 'page.html', type: 'text/html; charset=utf-8' },
  '/watch/style.css': { file: 'style.css', type: 'text/css; charset=utf-8' },
  '/watch/app.js': { file: 'app.ts', type: 'text/javascript; charset=utf-8', strip: true },
  '/watch/markdown.ts': { file: 'markdown.ts', type: 'text/javascript; charset=utf-8', strip: true },
  '/watch/vendor/markdown-it.js': { file: vendor('markdown-it/browser'), type: 'text/javascript; charset=utf-8' },
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
