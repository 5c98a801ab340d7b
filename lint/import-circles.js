// Finds circles of files: source files of the plan's folders (lint/floors.js) that import each other in a loop.
// A circle makes its files one unit in all but name; break it by moving what they share into a file of its own.
// Usage: node lint/import-circles.js [root]; exits 1 and names every circle's files when there is one.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { FLOORS } from './floors.js';

const IMPORT = /(?:^|[\s;])(?:import|export)\s[^;]*?\sfrom\s*['"](\.[^'"]+)['"]|\bimport\s*\(\s*['"](\.[^'"]+)['"]\s*\)|^\s*import\s*['"](\.[^'"]+)['"]/gm;

function sourceFiles(dir) {
  const out = [];
  for (const name of readdirSync(dir)) {
    const p = path.join(dir, name);
    if (statSync(p).isDirectory()) out.push(...sourceFiles(p));
    else if (/\.(ts|js)$/.test(name) && !name.endsWith('.d.ts')) out.push(p);
  }
  return out;
}

/** The import graph of the plan's folders under root: file → files it imports (paths relative to root). */
export function importGraph(root) {
  const graph = new Map();
  for (const folder of FLOORS.flat()) {
    let files;
    try {
      files = sourceFiles(path.join(root, folder));
    } catch {
      continue;
    }
    for (const abs of files) {
      const text = readFileSync(abs, 'utf8').replace(/\/\*[\s\S]*?\*\/|^\s*\/\/.*$/gm, '');
      const targets = new Set();
      for (const m of text.matchAll(IMPORT)) {
        const spec = m[1] ?? m[2] ?? m[3];
        targets.add(path.relative(root, path.resolve(path.dirname(abs), spec)));
      }
      graph.set(path.relative(root, abs), targets);
    }
  }
  return graph;
}

/** Every circle of the graph (strongly connected parts of two or more files, or a file importing itself). */
export function circles(graph) {
  let index = 0;
  const idx = new Map();
  const low = new Map();
  const stack = [];
  const onStack = new Set();
  const found = [];
  const visit = (v) => {
    idx.set(v, index);
    low.set(v, index);
    index += 1;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!idx.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v), low.get(w)));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v), idx.get(w)));
    }
    if (low.get(v) === idx.get(v)) {
      const part = [];
      let w;
      do {
        w = stack.pop();
        onStack.delete(w);
        part.push(w);
      } while (w !== v);
      if (part.length > 1 || graph.get(v)?.has(v)) found.push(part.sort());
    }
  };
  for (const v of graph.keys()) if (!idx.has(v)) visit(v);
  return found;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const root = path.resolve(process.argv[2] ?? path.join(import.meta.dirname, '..'));
  const found = circles(importGraph(root));
  for (const c of found) console.error(`circle of ${c.length} files: ${c.join(' → ')}`);
  if (found.length > 0) process.exit(1);
}
