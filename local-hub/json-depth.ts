// How deep a JSON text nests, found by scanning its characters (no recursion, no parsing), so a body nested
// thousands of levels deep is refused before JSON.parse, zod or JSON.stringify recurse into it.

/** Hub bodies are flat objects; only consumption `metadata` is free-form, and 32 levels is far more than it needs. */
export const MAX_JSON_DEPTH = 32;

export interface TooDeep {
  /** The top-level key whose value nests too deep, or `body` when the body itself does. */
  field: string;
  max: number;
}

/**
 * Undefined when `text` nests at most `max` levels of objects and arrays; otherwise where it went too deep.
 * Malformed text is not judged here: JSON.parse reports it afterwards.
 */
export function findTooDeep(text: string, max = MAX_JSON_DEPTH): TooDeep | undefined {
  let depth = 0;
  let inString = false;
  let stringStart = -1;
  let lastTopString = '';
  let topKey: string | undefined;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++; // backslash: skip the escaped character
      else if (c === 0x22) {
        inString = false;
        if (depth === 1) lastTopString = text.slice(stringStart, i + 1);
      }
      continue;
    }
    if (c === 0x22) {
      inString = true;
      stringStart = i;
    } else if (c === 0x7b || c === 0x5b) {
      depth++;
      if (depth > max) return { field: topKey ?? 'body', max };
    } else if (c === 0x7d || c === 0x5d) {
      depth--;
      if (depth <= 1) topKey = undefined;
    } else if (c === 0x3a && depth === 1) topKey = keyName(lastTopString);
    else if (c === 0x2c && depth === 1) topKey = undefined;
  }
  return undefined;
}

function keyName(quoted: string): string {
  try {
    const name = JSON.parse(quoted) as unknown;
    return typeof name === 'string' && name !== '' ? name.slice(0, 100) : 'body';
  } catch {
    return 'body';
  }
}
