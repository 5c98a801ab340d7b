// Parses YAML keeping source positions, validates it with a zod schema, and reports every problem
// of the file at once with its line and column.
import { FAILSAFE_SCHEMA, load as fastLoad, Type } from 'js-yaml';
import { isMap, LineCounter, parseDocument, type Document } from 'yaml';
import type { z } from 'zod';
import { didYouMean } from './did-you-mean.ts';
import { describeIssue } from './issue-message.ts';
import type { Problem } from './problems.ts';
import { knownKeysAt } from './schema-keys.ts';
import { locateMistake } from './yaml-mistake.ts';

export type Validated<T> = { ok: true; value: T; problems: Problem[] } | { ok: false; problems: Problem[] };

export function validateYaml<S extends z.ZodType>(file: string, text: string, schema: S): Validated<z.infer<S>> {
  // Most files are plain and valid: a parser ~10x faster without positions reads them, and only a file it cannot
  // read, or one the schema refuses, is parsed again with positions for its file:line:column problems.
  const fast = fastParse(text);
  if (fast.ok) {
    const parsed = schema.safeParse(fast.data);
    if (parsed.success) return { ok: true, value: parsed.data, problems: [] };
  }
  return validateWithPositions(file, text, schema);
}

/**
 * Documents the fast parser reads as the positional one would: none with anchors, aliases, tags, merge keys or
 * several documents (where the two parsers' rules differ), checked by test/yaml-fast-path.test.ts.
 */
const NOT_PLAIN = /(^|[\s[{,])[&*!]|<<|^---|^\.\.\.|^%/m;

// YAML 1.2's core scalars exactly as the positional parser (`yaml`) reads them: the fast parser's own core schema
// also takes 0b binary and folds -0 into 0.
const coreNull = new Type('tag:yaml.org,2002:null', { kind: 'scalar', resolve: (s: string | null) => s === null || /^(?:~|null|Null|NULL|)$/.test(s), construct: () => null });
const coreBool = new Type('tag:yaml.org,2002:bool', { kind: 'scalar', resolve: (s: string | null) => s !== null && /^(?:true|True|TRUE|false|False|FALSE)$/.test(s), construct: (s: string) => /^t/i.test(s) });
const CORE_INT = /^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$/;
const CORE_FLOAT = /^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$/;
const coreInt = new Type('tag:yaml.org,2002:int', {
  kind: 'scalar',
  resolve: (s: string) => CORE_INT.test(s),
  construct: (s: string) => (s.startsWith('0o') ? parseInt(s.slice(2), 8) : s.startsWith('0x') ? parseInt(s.slice(2), 16) : Number(s)),
});
const coreFloat = new Type('tag:yaml.org,2002:float', {
  kind: 'scalar',
  resolve: (s: string) => CORE_FLOAT.test(s) && !CORE_INT.test(s),
  construct: (s: string) => (/nan$/i.test(s) ? NaN : /inf$/i.test(s) ? (s.startsWith('-') ? -Infinity : Infinity) : Number(s)),
});
const FAST_SCHEMA = FAILSAFE_SCHEMA.extend({ implicit: [coreNull, coreBool, coreInt, coreFloat] });

/** The file's data by the fast parser, or not ok when it is not plain YAML, is empty or does not parse (duplicate keys included). */
export function fastParse(text: string): { ok: true; data: unknown } | { ok: false } {
  if (NOT_PLAIN.test(text)) return { ok: false };
  try {
    const data = fastLoad(text, { schema: FAST_SCHEMA });
    // An empty file is the positional path's to report.
    return data === undefined || data === null ? { ok: false } : { ok: true, data };
  } catch {
    return { ok: false };
  }
}

/** The positional path: every problem of the file at once, each at its line and column. */
export function validateWithPositions<S extends z.ZodType>(file: string, text: string, schema: S): Validated<z.infer<S>> {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: true });
  const syntax: Problem[] = doc.errors.map((e) => {
    // The parser says only "Map keys must be unique"; naming the key makes the fix obvious.
    const dupKey = e.code === 'DUPLICATE_KEY' ? /^["']?([^"':\n]+)/.exec(text.slice(e.pos[0]))?.[1]?.trim() : undefined;
    if (dupKey) {
      const pos = lineCounter.linePos(e.pos[0]);
      return { file, line: pos.line, column: pos.col, message: `duplicate key "${dupKey}" (each key may appear once in a mapping)`, severity: 'error' };
    }
    return { file, ...locateMistake(text, e, lineCounter), severity: 'error' };
  });
  // One mistake often upsets the parser twice at the same place: say it once, and in file order.
  const distinct = syntax.filter((p, i) => syntax.findIndex((q) => q.line === p.line && q.column === p.column && q.message === p.message) === i);
  if (distinct.length) return { ok: false, problems: distinct.sort((a, b) => (a.line ?? 0) - (b.line ?? 0) || (a.column ?? 0) - (b.column ?? 0)) };

  let data: unknown;
  try {
    data = doc.toJS();
  } catch (err) {
    // The yaml library refuses documents whose aliases expand too far (an alias bomb) by throwing here; it is this
    // file's problem, never the whole store's.
    return { ok: false, problems: [{ file, ...firstAlias(text, lineCounter), message: unreadableDocument(err), severity: 'error' }] };
  }
  if (data === null || data === undefined) return { ok: false, problems: [{ file, line: 1, column: 1, message: 'file is empty', severity: 'error' }] };
  const parsed = schema.safeParse(data);
  if (parsed.success) return { ok: true, value: parsed.data, problems: [] };

  const problems = parsed.error.issues.flatMap((issue): Problem[] => {
    // An unknown-key issue names several keys at the parent path: give each its own location.
    if (issue.code === 'unrecognized_keys') {
      const known = knownKeysAt(schema, issue.path);
      return issue.keys.map((key) => {
        const path = [...issue.path, key];
        const hint = didYouMean(key, known);
        const message = `unknown key "${key}"${hint ? ` (did you mean "${hint}"?)` : ''}`;
        return { file, ...locate(doc, lineCounter, path, true), field: dotted(path), message, severity: 'error' as const };
      });
    }
    const missing = issue.path.length > 0 && !doc.hasIn(issue.path) && (issue.code === 'invalid_type' || issue.code === 'invalid_value');
    const message = describeIssue(issue, valueAt(data, issue.path), !missing);
    // A missing field is shown at the key of the object that should hold it.
    const at = missing ? locate(doc, lineCounter, issue.path.slice(0, -1), true) : locate(doc, lineCounter, issue.path);
    return [{ file, ...at, field: dotted(issue.path) || undefined, message, severity: 'error' as const }];
  });
  // In file order, so a person fixes them top to bottom (zod reports transforms and pipes late).
  problems.sort((a, b) => (a.line ?? 0) - (b.line ?? 0) || (a.column ?? 0) - (b.column ?? 0));
  return { ok: false, problems };
}

/** Where a path points in the source: the value node, or the key itself for unknown keys. */
export function locate(doc: Document, lc: LineCounter, path: readonly PropertyKey[], atKey = false): { line: number; column: number } {
  // Walk as deep as the document goes: a missing field is reported at its nearest existing parent.
  for (let depth = path.length; depth >= 0; depth--) {
    const sub = path.slice(0, depth);
    if (atKey && depth === path.length && sub.length > 0) {
      const parent = sub.length > 1 ? doc.getIn(sub.slice(0, -1), true) : doc.contents;
      if (isMap(parent)) {
        const pair = parent.items.find((p) => (p.key as { value?: unknown } | null)?.value === sub.at(-1));
        const range = (pair?.key as { range?: [number, number, number] } | null)?.range;
        if (range) return pos(lc, range[0]);
      }
      continue;
    }
    const node = sub.length === 0 ? doc.contents : doc.getIn(sub, true);
    const range = (node as { range?: [number, number, number] } | null)?.range;
    if (range) return pos(lc, range[0]);
  }
  return { line: 1, column: 1 };
}

function pos(lc: LineCounter, offset: number): { line: number; column: number } {
  const p = lc.linePos(offset);
  return { line: p.line, column: p.col };
}

function dotted(path: readonly PropertyKey[]): string {
  return path.map((p) => (typeof p === 'number' ? `[${p}]` : String(p))).join('.').replace(/\.\[/g, '[');
}

/** The plain value at a path of the parsed data (what the schema saw), or undefined. */
function valueAt(data: unknown, path: readonly PropertyKey[]): unknown {
  let v = data;
  for (const seg of path) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<PropertyKey, unknown>)[seg];
  }
  return v;
}

/** Why a parsed document could not become data, in words a person can act on. */
function unreadableDocument(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  if (/alias count/i.test(message)) return 'too many alias expansions (anchors and *aliases that repeat each other): the file is refused as a resource exhaustion risk; write the values out instead';
  return `the YAML cannot be read: ${message}`;
}

/** Where the first `*alias` is, so the alias problem points into the file; line 1 when there is none. */
function firstAlias(text: string, lc: LineCounter): { line: number; column: number } {
  const at = text.search(/(^|[\s[{,:-])\*[^\s,\]}]/m);
  if (at < 0) return { line: 1, column: 1 };
  return pos(lc, text[at] === '*' ? at : at + 1);
}
