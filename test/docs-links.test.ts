// The README and docs/ stand on their own in a clone: every relative link (and #anchor) resolves, and nothing in
// the sources or docs points outside the repository (the steering folder beside a checkout).
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { describe, expect, it } from 'vitest';

const DOCS = ['README.md', ...readdirSync('docs').filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];

/** GitHub's anchors: headings lowercased, punctuation dropped, spaces to dashes; plus explicit <a id>. */
function anchors(file: string): Set<string> {
  const text = readFileSync(file, 'utf8').replace(/^(```|~~~)[\s\S]*?^\1/gm, '');
  const out = new Set<string>();
  for (const m of text.matchAll(/^#+ (.*)$/gm)) out.add(m[1]!.trim().toLowerCase().replace(/[^\p{L}\p{N}_\- ]/gu, '').replaceAll(' ', '-'));
  for (const m of text.matchAll(/<a id="([^"]+)"/g)) out.add(m[1]!);
  return out;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    if (['node_modules', '.git', 'data', 'workspaces'].includes(e.name)) return [];
    const path = join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(path);
    return /\.(ts|md)$/.test(e.name) ? [path] : [];
  });
}

describe('documentation', () => {
  it('every relative link in README.md and docs/ resolves, anchors included', () => {
    const broken: string[] = [];
    for (const file of DOCS) {
      const text = readFileSync(file, 'utf8').replace(/^(```|~~~)[\s\S]*?^\1/gm, '').replace(/`[^`\n]*`/g, '');
      for (const m of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        const link = m[1]!;
        if (/^[a-z]+:/.test(link)) continue;
        const [path, anchor] = link.split('#') as [string, string | undefined];
        const target = path ? normalize(join(dirname(file), path)) : file;
        if (!existsSync(target)) broken.push(`${file}: ${link} (no such file)`);
        else if (anchor && target.endsWith('.md') && !anchors(target).has(anchor)) broken.push(`${file}: ${link} (no such heading)`);
      }
    }
    expect(broken).toEqual([]);
  });

  it('nothing points at the steering folder beside a checkout, which a clone does not have', () => {
    const outside = ['..', 'shared'].join('/'); // spelled apart, so this file does not find itself
    const hits = sourceFiles('.').filter((f) => readFileSync(f, 'utf8').includes(outside));
    expect(hits).toEqual([]);
  });
});
