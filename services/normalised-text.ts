// The text as the redactor matches it: cheap disguises undone, with where each character came from, so a match is
// replaced in the original text (nothing else of it changes). Undone: compatibility forms (NFKC: full-width and
// styled letters), invisible format characters (Unicode Cf: zero-width space and joiners, soft hyphen, BOM,
// direction marks), JSON `\uXXXX` escapes, quoted-printable soft line breaks (`=` before a line break) and, when
// asked, the line breaks and indentation a value may be split by (raw or JSON-escaped).

export interface NormaliseMode {
  /** Take out whitespace and escaped `\n` `\r` `\t` (for known values, which have none left either). */
  splits: boolean;
  /** Take out `=` before a line break (quoted-printable soft breaks). */
  softBreaks: boolean;
}

export interface Normalised {
  flat: string;
  /** For each character of `flat`: where what it came from starts in the original. Absent: `flat` is the original. */
  from?: Uint32Array;
  /** Where that ends, for characters that did not come from exactly one character (a `\u` escape, a surrogate pair). */
  wide?: ReadonlyMap<number, number>;
}

/** Where a match [start, end) in `flat` lies in the original. */
export function spanOf(n: Normalised, start: number, end: number): [number, number] {
  if (!n.from) return [start, end];
  const last = end - 1;
  return [n.from[start]!, n.wide?.get(last) ?? n.from[last]! + 1];
}

/** What the normalisation may change, by mode; text without any is returned as it is (most log lines, quickly). */
const MAY_CHANGE_SPLITS = /[\s\\=\u0080-\uffff]/;
const ESCAPE_OR_BREAK = /\\u[0-9A-Fa-f]{4}|=(?:\r?\n|\\r\\n|\\n)/;
const NON_ASCII = /[\u0080-\uffff]/;
const ANY_FORMAT = /\p{Cf}/u;

function mayChange(text: string, mode: NormaliseMode): boolean {
  if (mode.splits) return MAY_CHANGE_SPLITS.test(text);
  // Accented letters and emoji are common and change nothing: NFKC of the whole text (native) tells first.
  return ESCAPE_OR_BREAK.test(text) || (NON_ASCII.test(text) && (ANY_FORMAT.test(text) || text.normalize('NFKC') !== text));
}

/** `=` right before a line break, raw or JSON-escaped. */
const SOFT_BREAK = /=(?:\r?\n|\\r\\n|\\n)/;
const FORMAT = /^\p{Cf}$/u;
const SPACE = /^\s+$/;
const HEX4 = /^[0-9A-Fa-f]{4}$/;

/** Whether any `=` soft line break is in the text (the soft-break pass is run only then). */
export function hasSoftBreak(text: string): boolean {
  return SOFT_BREAK.test(text);
}

/** Line breaks and indentation a value may have been split by, raw or JSON-escaped (`\n` as two characters). */
function splitAt(text: string, i: number): number {
  const c = text.charCodeAt(i);
  if (c === 32 || (c >= 9 && c <= 13)) return 1;
  if (c === 92) {
    const n = text.charCodeAt(i + 1);
    if (n === 110 || n === 114 || n === 116) return 2; // \n \r \t
  }
  return 0;
}

/** A soft line break's length at `i` (`=` and its line break), 0 when there is none. */
function softBreakAt(text: string, i: number): number {
  if (text.charCodeAt(i) !== 61) return 0;
  const m = /^(?:\r?\n|\\r\\n|\\n)/.exec(text.slice(i + 1, i + 5));
  return m ? 1 + m[0].length : 0;
}

/** NFKC of one character (code point), format characters as '', null when it stays; cached, as text repeats its characters. */
const folded = new Map<number, string | null>();
function fold(cp: number): string | null {
  let out = folded.get(cp);
  if (out === undefined) {
    const ch = String.fromCodePoint(cp);
    const nfkc = FORMAT.test(ch) ? '' : ch.normalize('NFKC');
    out = nfkc === ch ? null : nfkc;
    if (folded.size < 4096) folded.set(cp, out);
  }
  return out;
}

/** The original position of each character of the normalised text, in a growable array. */
class Origins {
  from: Uint32Array;
  readonly wide = new Map<number, number>();
  length = 0;
  constructor(capacity: number) {
    this.from = new Uint32Array(capacity);
  }
  #room(count: number): void {
    if (this.length + count <= this.from.length) return;
    const from = new Uint32Array(Math.max(2 * this.from.length, this.length + count));
    from.set(this.from);
    this.from = from;
  }
  /** `count` characters that came from the original [start, end). */
  push(start: number, end: number, count: number): void {
    this.#room(count);
    for (let k = 0; k < count; k++) {
      if (end !== start + 1) this.wide.set(this.length, end);
      this.from[this.length++] = start;
    }
  }
  /** Characters kept as they are: each its own. */
  pushRun(start: number, end: number): void {
    this.#room(end - start);
    for (let k = start; k < end; k++) this.from[this.length++] = k;
  }
}

/** Whitespace and escaped `\n` `\r` `\t`: what splits mode takes out of text that holds nothing else to undo. */
const SPLITS = /[\t-\r ]|\\[nrt]/g;
const UNICODE_ESCAPE = /\\u[0-9A-Fa-f]{4}/;

/**
 * normalise(text, mode).flat without the origins, which cost a number per character and are needed only where a
 * match is to be placed in the original (rare: ask normalise() then). ASCII text with no `\u` escape, and no soft
 * break where those count, has only splits to take out: one native replace instead of the walk.
 */
export function flatten(text: string, mode: NormaliseMode): string {
  if (!mayChange(text, mode)) return text;
  if (mode.splits && !NON_ASCII.test(text) && !UNICODE_ESCAPE.test(text) && !(mode.softBreaks && SOFT_BREAK.test(text))) return text.replace(SPLITS, '');
  return normalise(text, mode).flat;
}

export function normalise(text: string, mode: NormaliseMode): Normalised {
  if (!mayChange(text, mode)) return { flat: text };
  // Allocated at the first change: most text that may change does not (accented letters, emoji).
  let origins: Origins | undefined;
  const pieces: string[] = [];
  /** Emits `out` for the original span [start, end); whitespace in it goes in splits mode. */
  const emit = (out: string, start: number, end: number): void => {
    if (out === '' || (mode.splits && SPACE.test(out))) return;
    pieces.push(out);
    origins!.push(start, end, out.length);
  };
  let runStart = 0;
  let i = 0;
  /** Before a change at `i`: the unchanged characters since the last one are kept. */
  const closeRun = (): void => {
    origins ??= new Origins(text.length);
    if (i > runStart) {
      pieces.push(text.slice(runStart, i));
      origins.pushRun(runStart, i);
    }
  };
  while (i < text.length) {
    const c = text.charCodeAt(i);
    // The common case: an ASCII character that is none of the special ones stays in the current run.
    if (c < 128 && c !== 92 && c !== 61 && c !== 32 && !(c >= 9 && c <= 13)) {
      i++;
      continue;
    }
    let skip = mode.splits ? splitAt(text, i) : 0;
    if (!skip && mode.softBreaks) skip = softBreakAt(text, i);
    if (skip) {
      closeRun();
      i += skip;
      runStart = i;
      continue;
    }
    let out: string | null = null;
    let len = 1;
    if (c === 92 && text.charCodeAt(i + 1) === 117 && HEX4.test(text.slice(i + 2, i + 6))) {
      const cp = parseInt(text.slice(i + 2, i + 6), 16);
      out = cp < 128 ? String.fromCharCode(cp) : (fold(cp) ?? String.fromCharCode(cp));
      len = 6;
    } else if (c >= 128) {
      const cp = text.codePointAt(i)!;
      len = cp > 0xffff ? 2 : 1;
      out = fold(cp);
    }
    if (out === null) {
      i += len;
      continue;
    }
    closeRun();
    emit(out, i, i + len);
    i += len;
    runStart = i;
  }
  if (!origins) return { flat: text };
  closeRun();
  return { flat: pieces.join(''), from: origins.from, wide: origins.wide.size ? origins.wide : undefined };
}
