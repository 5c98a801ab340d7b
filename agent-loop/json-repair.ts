// Deterministic JSON repair for what models write (docs/agent-loop.md R6): code fences, single quotes, bare keys,
// Python literals, trailing commas, and a reply cut off before its closing brackets. One pass over the text
// with a bracket stack; no guessing beyond that, so a repair never invents content.

/** Parses `text` as JSON, repairing it when plain parsing fails; undefined when even the repair does not parse. */
export function parseLenientJson(text: string): { value: unknown; repaired: boolean } | undefined {
  const stripped = stripFences(text.trim());
  try {
    return { value: JSON.parse(stripped), repaired: stripped !== text.trim() };
  } catch {
    // fall through to the repair
  }
  try {
    return { value: JSON.parse(repairJsonText(stripped)), repaired: true };
  } catch {
    return undefined;
  }
}

export function stripFences(text: string): string {
  const m = /^```[\w-]*[ \t]*\r?\n?([\s\S]*?)\r?\n?```$/.exec(text);
  return m ? (m[1] ?? '').trim() : text;
}

export function repairJsonText(input: string): string {
  const text = input.replace(/[\u201c\u201d]/g, '"').replace(/[\u2018\u2019]/g, "'");
  // Pieces, not one growing string: dropping a trailing comma pops pieces instead of rewriting the whole text, so
  // the repair stays linear in its input (a regex over the text per closing bracket took seconds on 256 KiB).
  const out: string[] = [];
  const stack: string[] = [];
  let i = 0;
  while (i < text.length) {
    const ch = text[i]!;
    if (ch === '"' || ch === "'") {
      const { literal, next } = readString(text, i, ch);
      out.push(literal);
      i = next;
      continue;
    }
    if (ch === '{' || ch === '[') {
      stack.push(ch === '{' ? '}' : ']');
      out.push(ch);
    } else if (ch === '}' || ch === ']') {
      dropTrailingComma(out);
      if (stack[stack.length - 1] === ch) stack.pop();
      out.push(ch);
    } else if (isWordStart(text.charCodeAt(i))) {
      WORD.lastIndex = i;
      const word = WORD.exec(text)?.[0] ?? ch;
      let after = i + word.length;
      while (after < text.length && /\s/.test(text[after]!)) after++;
      const literal = ({ True: 'true', False: 'false', None: 'null', true: 'true', false: 'false', null: 'null' } as Record<string, string>)[word];
      // A bare word before ':' is a key; a known literal stays a literal; any other bare word becomes a string.
      out.push(text[after] === ':' ? JSON.stringify(word) : (literal ?? JSON.stringify(word)));
      i += word.length;
      continue;
    } else {
      out.push(ch);
    }
    i++;
  }
  dropTrailingComma(out);
  while (stack.length) out.push(stack.pop()!);
  return out.join('');
}

const WORD = /[A-Za-z_$][\w$-]*/y;

/** [A-Za-z_$], by code (a regex per character was most of the repair's time). */
function isWordStart(c: number): boolean {
  return (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95 || c === 36;
}

/** Removes a comma and the blanks after it from the end of `out` (single-character pieces), as `/,\s*$/` did. */
function dropTrailingComma(out: string[]): void {
  let j = out.length - 1;
  while (j >= 0 && out[j]!.length === 1 && /\s/.test(out[j]!)) j--;
  if (j >= 0 && out[j] === ',') out.length = j;
}

/** Reads a string opened by `quote` at `start` and returns it double-quoted; an unterminated one is closed. */
function readString(text: string, start: number, quote: string): { literal: string; next: number } {
  const body: string[] = [];
  let i = start + 1;
  while (i < text.length) {
    const ch = text[i]!;
    if (ch === '\\' && i + 1 < text.length) {
      const esc = text[i + 1]!;
      body.push(esc === "'" ? "'" : `\\${esc}`);
      i += 2;
      continue;
    }
    if (ch === quote) return { literal: `"${body.join('')}"`, next: i + 1 };
    if (ch === '"') body.push('\\"');
    else if (ch === '\n') body.push('\\n');
    else if (ch === '\t') body.push('\\t');
    else if (ch === '\r') body.push('\\r');
    else body.push(ch);
    i++;
  }
  return { literal: `"${body.join('')}"`, next: i };
}
