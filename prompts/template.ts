// Prompt templates are Markdown files with {{placeholders}}; unknown placeholders are left visible
// so a typo in a template shows up in the rendered prompt instead of vanishing. A store's
// `prompts/<name>.md` replaces the shipped template of the same name.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const TEMPLATE_DIR = join(import.meta.dirname, 'templates');
const cache = new Map<string, string>();

export function loadTemplate(name: string, overrides?: Readonly<Record<string, string>>): string {
  const own = overrides?.[name];
  if (own !== undefined) return own;
  let t = cache.get(name);
  if (t === undefined) {
    t = readFileSync(join(TEMPLATE_DIR, `${name}.md`), 'utf8');
    cache.set(name, t);
  }
  return t;
}

export function fill(template: string, vars: Readonly<Record<string, string>>): string {
  return template.replace(/\{\{\s*([a-z_]+)\s*\}\}/g, (whole, key: string) => vars[key] ?? whole);
}
