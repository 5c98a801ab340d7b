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
  /** For each character of `flat`: the start and end (exclusive) in the original of what it came from. Absent: `flat` is the original. */
  from?: Uint32Array;
  to?: Uint32Array;
}

/** Where a match in `flat` lies in the original. */
export function spanOf(n: Normalised, start: number, end: number): [number, number] {
  return n.from && n.to ? [n.from[start]!, n.to[end - 1]!] : [start, end];
}

/** What the normalisation may change, by mode; text without any is returned as it is (most log lines, quickly). */
const MAY_CHANGE_SPLITS = /[\s\\=\u0080-\uffff]/;
const MAY_CHANGE = /[\u0080-\uffff]|\\u[0-9A-Fa-f]{4}|=(?:\r?\n|\\r\\n|\\n)/;
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

/** Growable parallel arrays of original spans. */
class Spans {
  from = new Uint32Array(0);
  to = new Uint32Array(0);
  length = 0;
  constructor(capacity: number) {
    this.from = new Uint32Array(capacity);
    this.to = new Uint32Array(capacity);
  }
  push(start: number, end: number, count: number): void {
    if (this.length + count > this.from.length) {
      const size = Math.max(2 * this.from.length, this.length + count);
      const from = new Uint32Array(size);
      const to = new Uint32Array(size);
      from.set(this.from);
      to.set(this.to);
      this.from = from;
      this.to = to;
    }
    for (let k = 0; k < count; k++) {
      this.from[this.length] = start;
      this.to[this.length++] = end;
    }
  }
  /** Characters kept as they are: each its own span. */
  pushRun(start: number, end: number): void {
    this.push(0, 0, end - start);
    for (let k = start, at = this.length - (end - start); k < end; k++, at++) {
      this.from[at] = k;
      this.to[at] = k + 1;
    }
  }
}

export function normalise(text: string, mode: NormaliseMode): Normalised {
  if (!(mode.splits ? MAY_CHANGE_SPLITS : MAY_CHANGE).test(text)) return { flat: text };
  const spans = new Spans(text.length);
  const pieces: string[] = [];
  let changed = false;
  /** Emits `out` for the original span [start, end); whitespace in it goes in splits mode. */
  const emit = (out: string, start: number, end: number): void => {
    if (out === '' || (mode.splits && SPACE.test(out))) return;
    pieces.push(out);
    spans.push(start, end, out.length);
  };
  let runStart = 0;
  let i = 0;
  const closeRun = (): void => {
    if (i > runStart) {
      pieces.push(text.slice(runStart, i));
      spans.pushRun(runStart, i);
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
      changed = true;
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
    changed = true;
    emit(out, i, i + len);
    i += len;
    runStart = i;
  }
  closeRun();
  if (!changed) return { flat: text };
  return { flat: pieces.join(''), from: spans.from, to: spans.to };
}
