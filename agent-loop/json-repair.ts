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
  let out = '';
  const stack: string[] = [];
  let i = 0;
  while (i < text.length) {
    const ch = text[i]!;
    if (ch === '"' || ch === "'") {
      const { literal, next } = readString(text, i, ch);
      out += literal;
      i = next;
      continue;
    }
    if (ch === '{' || ch === '[') {
      stack.push(ch === '{' ? '}' : ']');
      out += ch;
    } else if (ch === '}' || ch === ']') {
      out = out.replace(/,\s*$/, '');
      if (stack[stack.length - 1] === ch) stack.pop();
      out += ch;
    } else if (/[A-Za-z_$]/.test(ch)) {
      const word = /^[A-Za-z_$][\w$-]*/.exec(text.slice(i))?.[0] ?? ch;
      const after = text.slice(i + word.length).trimStart();
      const literal = ({ True: 'true', False: 'false', None: 'null', true: 'true', false: 'false', null: 'null' } as Record<string, string>)[word];
      // A bare word before ':' is a key; a known literal stays a literal; any other bare word becomes a string.
      out += after.startsWith(':') ? JSON.stringify(word) : (literal ?? JSON.stringify(word));
      i += word.length;
      continue;
    } else {
      out += ch;
    }
    i++;
  }
  out = out.replace(/,\s*$/, '');
  while (stack.length) out += stack.pop();
  return out;
}

/** Reads a string opened by `quote` at `start` and returns it double-quoted; an unterminated one is closed. */
function readString(text: string, start: number, quote: string): { literal: string; next: number } {
  let body = '';
  let i = start + 1;
  while (i < text.length) {
    const ch = text[i]!;
    if (ch === '\\' && i + 1 < text.length) {
      const esc = text[i + 1]!;
      body += esc === "'" ? "'" : `\\${esc}`;
      i += 2;
      continue;
    }
    if (ch === quote) return { literal: `"${body}"`, next: i + 1 };
    if (ch === '"') body += '\\"';
    else if (ch === '\n') body += '\\n';
    else if (ch === '\t') body += '\\t';
    else if (ch === '\r') body += '\\r';
    else body += ch;
    i++;
  }
  return { literal: `"${body}"`, next: i };
}
