// ESLint rule `warren/floors`: an import may not run up a floor, nor sideways into another folder of the same floor.
import path from 'node:path';
import { floorOf } from './floors.js';

const ROOT = path.resolve(import.meta.dirname, '..');

/** The top-level folder of an absolute path inside the project, or undefined. */
function folderOf(abs) {
  const rel = path.relative(ROOT, abs);
  if (rel.startsWith('..') || path.isAbsolute(rel)) return undefined;
  const parts = rel.split(path.sep);
  return parts.length > 1 ? parts[0] : undefined;
}

export const floorsRule = {
  meta: {
    type: 'problem',
    docs: { description: 'imports point down the floors of lint/floors.js' },
    schema: [],
    messages: {
      up: "{{from}}/ (floor {{fromFloor}}) may not import {{to}}/ (floor {{toFloor}}): imports point down a floor (lint/floors.js)",
      sideways: '{{from}}/ and {{to}}/ share floor {{fromFloor}} and may not import each other (lint/floors.js)',
    },
  },
  create(context) {
    const file = context.filename;
    const from = folderOf(file);
    const fromFloor = from === undefined ? undefined : floorOf(from);
    if (fromFloor === undefined) return {};
    function check(node, source) {
      if (!source || typeof source.value !== 'string' || !source.value.startsWith('.')) return;
      const to = folderOf(path.resolve(path.dirname(file), source.value));
      if (to === undefined || to === from) return;
      const toFloor = floorOf(to);
      if (toFloor === undefined) return;
      const data = { from, to, fromFloor: String(fromFloor + 1), toFloor: String(toFloor + 1) };
      if (toFloor > fromFloor) context.report({ node: source, messageId: 'up', data });
      else if (toFloor === fromFloor) context.report({ node: source, messageId: 'sideways', data });
    }
    return {
      ImportDeclaration: (node) => check(node, node.source),
      ExportNamedDeclaration: (node) => check(node, node.source),
      ExportAllDeclaration: (node) => check(node, node.source),
      ImportExpression: (node) => check(node, node.source.type === 'Literal' ? node.source : undefined),
    };
  },
};

export default { rules: { floors: floorsRule } };
