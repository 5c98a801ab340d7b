// Where a YAML syntax mistake is, as a person fixing the file looks for it. The parser reports where it noticed
// the trouble: a key indented one space too deep on line 5 comes out at the end of line 4, an unclosed quote or
// bracket at the end of the file. These rules move the report to the line that holds the mistake.
import { Parser, type LineCounter, type YAMLError } from 'yaml';

export interface SyntaxMistake {
  line: number;
  column: number;
  message: string;
}

export function locateMistake(text: string, error: YAMLError, lc: LineCounter): SyntaxMistake {
  const noticed = lc.linePos(error.pos[0]);
  const parserSays = { line: noticed.line, column: noticed.col, message: `YAML syntax: ${firstLine(error.message)}` };
  if (error.code === 'BLOCK_AS_IMPLICIT_KEY' || error.code === 'MULTILINE_IMPLICIT_KEY') return tooDeep(text, noticed.line) ?? parserSays;
  if (error.code === 'BAD_INDENT' && error.message.startsWith('All mapping items must start at the same column')) return misaligned(text, noticed.line) ?? parserSays;
  if (error.code === 'MISSING_CHAR' && /closing ["']quote/.test(error.message)) {
    const open = unclosed(text, 'quote');
    if (open !== undefined) return at(lc, open, `YAML syntax: this quoted value is never closed (its closing ${text[open]} is missing)`);
  }
  if (error.code === 'BAD_INDENT' && /^Flow (sequence|map)/.test(error.message)) {
    const open = unclosed(text, error.message.startsWith('Flow sequence') ? '[' : '{');
    if (open !== undefined) return at(lc, open, `YAML syntax: this ${text[open]} is never closed (a ${text[open] === '[' ? ']' : '}'} is missing)`);
  }
  return parserSays;
}

/**
 * A line indented deeper than the line above it, when that line already has a value (`provider: openai` then
 * `   model: m`): the parser reads the two as one multi-line key and complains about the first.
 */
function tooDeep(text: string, noticedLine: number): SyntaxMistake | undefined {
  const lines = text.split('\n');
  const above = lines[noticedLine - 1];
  if (above === undefined || !/^\s*(- )?[^\s#][^:#]*:\s+[^\s#]/.test(above)) return undefined;
  for (let i = noticedLine; i < lines.length; i++) {
    const line = lines[i]!;
    if (/^\s*(#|$)/.test(line)) continue; // blank lines and comments do not count
    const indent = indentOf(line);
    if (indent <= indentOf(above)) return undefined;
    const key = keyOf(line);
    return {
      line: i + 1,
      column: indent + 1,
      message: `YAML syntax: ${key ? `"${key}" is` : 'this line is'} indented deeper than the line above, which already has a value (keys of one mapping line up)`,
    };
  }
  return undefined;
}

/** A key the parser found out of line with its mapping (after a quoted value, or shallower than its siblings). */
function misaligned(text: string, lineNo: number): SyntaxMistake | undefined {
  const lines = text.split('\n');
  const line = lines[lineNo - 1];
  if (line === undefined) return undefined;
  let above = lineNo - 1;
  while (above > 0 && /^\s*(#|$)/.test(lines[above - 1]!)) above--;
  if (above > 0 && indentOf(lines[above - 1]!) < indentOf(line)) return tooDeep(text, above);
  const key = keyOf(line);
  return { line: lineNo, column: indentOf(line) + 1, message: `YAML syntax: ${key ? `"${key}" does` : 'this line does'} not line up with the keys above it (keys of one mapping start at the same column)` };
}

const indentOf = (line: string): number => /^ */.exec(line)![0].length;
const keyOf = (line: string): string | undefined => /^\s*([^:#\s][^:#]*):/.exec(line)?.[1]?.trim();

/** The offset of the first quoted value or flow collection (`[`, `{`) that is never closed, from the parser's tokens. */
function unclosed(text: string, what: 'quote' | '[' | '{'): number | undefined {
  let found: number | undefined;
  const visit = (node: unknown): void => {
    if (found !== undefined || node === null || typeof node !== 'object') return;
    if (Array.isArray(node)) return node.forEach(visit);
    const t = node as { type?: string; offset?: number; source?: string; start?: { source?: string }; end?: Array<{ source?: string }> };
    if (what === 'quote' && t.type === 'double-quoted-scalar' && !/^"(?:[^"\\]|\\[\s\S])*"$/.test(t.source ?? '')) found = t.offset;
    else if (what === 'quote' && t.type === 'single-quoted-scalar' && !/^'(?:[^']|'')*'$/.test(t.source ?? '')) found = t.offset;
    else if (t.type === 'flow-collection' && t.start?.source === what && !t.end?.some((e) => e.source === (what === '[' ? ']' : '}'))) found = t.offset;
    for (const v of Object.values(t)) if (typeof v === 'object') visit(v);
  };
  for (const token of new Parser().parse(text)) visit(token);
  return found;
}

function at(lc: LineCounter, offset: number, message: string): SyntaxMistake {
  const p = lc.linePos(offset);
  return { line: p.line, column: p.col, message };
}

function firstLine(s: string): string {
  return s.split('\n')[0] ?? s;
}
