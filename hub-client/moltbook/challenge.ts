// Solves Moltbook's verification challenges: obfuscated arithmetic word problems ("A] lO-bS tErS^ cLaW …
// tWeNtY tHrEe NeWtOnS … lO~sEs fIvE"). Pure and deterministic. A wrong answer counts towards a suspension
// (ten in a row), so anything the rules below cannot read with confidence is "unsure", never a guess.

export type ChallengeAnswer =
  | { kind: 'answer'; answer: string; numbers: number[]; ops: Op[] }
  | { kind: 'unsure'; reason: string };

export type Op = 'add' | 'subtract' | 'multiply' | 'divide';

const UNITS: Record<string, number> = {
  zero: 0, one: 1, two: 2, three: 3, four: 4, five: 5, six: 6, seven: 7, eight: 8, nine: 9, ten: 10,
  eleven: 11, twelve: 12, thirteen: 13, fourteen: 14, fifteen: 15, sixteen: 16, seventeen: 17, eighteen: 18, nineteen: 19,
};
const TENS: Record<string, number> = { twenty: 20, thirty: 30, forty: 40, fifty: 50, sixty: 60, seventy: 70, eighty: 80, ninety: 90 };
const SCALES: Record<string, number> = { hundred: 100, thousand: 1000 };

/** Words that name one operation wherever they stand. */
const STRONG: Record<string, Op> = {
  plus: 'add', add: 'add', adds: 'add', added: 'add', gains: 'add', gain: 'add', gained: 'add', increases: 'add', increase: 'add', increased: 'add', sum: 'add',
  minus: 'subtract', subtract: 'subtract', subtracts: 'subtract', loses: 'subtract', lose: 'subtract', lost: 'subtract', reduces: 'subtract', reduce: 'subtract', reduced: 'subtract',
  decreases: 'subtract', decrease: 'subtract', decreased: 'subtract', slows: 'subtract', releases: 'subtract', drops: 'subtract',
  times: 'multiply', multiplied: 'multiply', multiply: 'multiply', multiplies: 'multiply', product: 'multiply',
  divided: 'divide', divide: 'divide', divides: 'divide', split: 'divide', splits: 'divide', shared: 'divide', share: 'divide', equally: 'divide',
};
/** Words that only hint: "total" is a sum unless "each" makes it a product. */
const WEAK: Record<string, Op> = { total: 'add', combined: 'add', together: 'add', another: 'add', remain: 'subtract', remains: 'subtract', remaining: 'subtract', each: 'multiply' };

/** Hesitations the challenges sprinkle in ("um,", "errr"), even inside a number. */
const FILLERS = new Set(['um', 'uh', 'er', 'erm', 'hm', 'ah']);

/** Runs of one letter collapse to one, so "tWeNnTyY" and "twenty" meet; the vocabulary is collapsed the same way. */
function collapse(word: string): string {
  return word.replace(/([a-z])\1+/g, '$1');
}

const VOCAB = new Map<string, string>();
for (const w of [...Object.keys(UNITS), ...Object.keys(TENS), ...Object.keys(SCALES), ...Object.keys(STRONG), ...Object.keys(WEAK), 'and', 'point']) {
  const c = collapse(w);
  const had = VOCAB.get(c);
  // Two words that collapse alike would make a garbled one ambiguous; none do today, and a new one must not.
  if (had !== undefined && had !== w) throw new Error(`challenge vocabulary: "${had}" and "${w}" collapse alike`);
  VOCAB.set(c, w);
}

/** Letters and digits only, lower case; words that an injected space split are joined back where they form a known word. */
export function degarble(text: string): string[] {
  const raw = text
    .toLowerCase()
    .replace(/(\d)[.,](?=\d)/g, '$1d') // a decimal point survives the noise stripping as "d"
    .replace(/[^a-z0-9\s]/g, '')
    .split(/\s+/)
    .filter((w) => w !== '' && !FILLERS.has(collapse(w)));
  const out: string[] = [];
  for (let i = 0; i < raw.length; ) {
    let matched = false;
    for (let k = Math.min(3, raw.length - i); k >= 1; k--) {
      const joined = raw.slice(i, i + k).join('');
      const known = /^[a-z]+$/.test(joined) ? VOCAB.get(collapse(joined)) : undefined;
      if (known !== undefined) {
        out.push(known);
        i += k;
        matched = true;
        break;
      }
    }
    if (!matched) out.push(/^\d/.test(raw[i]!) ? raw[i]! : collapse(raw[i]!));
    if (!matched) i++;
  }
  return out;
}

interface Token {
  kind: 'number' | 'word';
  value: number;
  word: string;
}

function isNumberWord(w: string): boolean {
  return w in UNITS || w in TENS || w in SCALES;
}

/** Number words in a row become one number ("one hundred and twenty", "twenty three", "fourteen point five"). */
function readNumbers(words: string[]): Token[] | undefined {
  const out: Token[] = [];
  for (let i = 0; i < words.length; ) {
    const w = words[i]!;
    if (/^\d+(d\d+)?$/.test(w)) {
      out.push({ kind: 'number', value: Number(w.replace('d', '.')), word: w });
      i++;
      continue;
    }
    if (!isNumberWord(w)) {
      out.push({ kind: 'word', value: 0, word: w });
      i++;
      continue;
    }
    let total = 0;
    let current = 0;
    let last: 'unit' | 'ten' | 'scale' | undefined;
    for (; i < words.length; i++) {
      const x = words[i]!;
      if (x in UNITS) {
        if (last === 'unit' || (last === 'ten' && UNITS[x]! >= 10)) break; // "five three" is two numbers
        current += UNITS[x]!;
        last = 'unit';
      } else if (x in TENS) {
        if (last === 'unit' || last === 'ten') break;
        current += TENS[x]!;
        last = 'ten';
      } else if (x in SCALES) {
        if (last === undefined || last === 'scale') return undefined;
        const scale = SCALES[x]!;
        if (scale === 1000) {
          total += current * scale;
          current = 0;
        } else current *= scale;
        last = 'scale';
      } else if (x === 'and' && last === 'scale' && isNumberWord(words[i + 1] ?? '')) {
        continue;
      } else break;
    }
    let value = total + current;
    if (words[i] === 'point') {
      let digits = '';
      for (i++; i < words.length && (words[i]! in UNITS) && UNITS[words[i]!]! < 10; i++) digits += String(UNITS[words[i]!]);
      if (digits === '') return undefined;
      value = Number(`${value}.${digits}`);
    }
    out.push({ kind: 'number', value, word: String(value) });
  }
  return out;
}

function classesIn(words: readonly string[], table: Record<string, Op>): Set<Op> {
  return new Set(words.flatMap((w) => (w in table ? [table[w]!] : [])));
}

/** The operation the whole text names when a gap between two numbers names none. */
function globalOp(words: readonly string[]): Op | 'unsure' {
  const strong = classesIn(words, STRONG);
  if (strong.size === 1) return [...strong][0]!;
  if (strong.size > 1) return 'unsure';
  const weak = classesIn(words, WEAK);
  if (weak.has('multiply') && !weak.has('subtract')) return 'multiply'; // "each … total": a product
  if (weak.size === 1) return [...weak][0]!;
  return 'unsure';
}

function apply(a: number, op: Op, b: number): number | undefined {
  switch (op) {
    case 'add':
      return a + b;
    case 'subtract':
      return a - b;
    case 'multiply':
      return a * b;
    case 'divide':
      // "Fifteen lobsters share one hundred fifty shrimp": the order of a smaller dividend is not readable.
      return b === 0 || a < b ? undefined : a / b;
  }
}

export function solveChallenge(text: string): ChallengeAnswer {
  const tokens = readNumbers(degarble(text));
  if (!tokens) return { kind: 'unsure', reason: 'a number that does not read' };
  const numbers = tokens.filter((t) => t.kind === 'number');
  if (numbers.length < 2) return { kind: 'unsure', reason: `${numbers.length} number(s) found, two or more needed` };
  if (numbers.length > 4) return { kind: 'unsure', reason: 'too many numbers' };
  const words = tokens.filter((t) => t.kind === 'word').map((t) => t.word);
  const fallback = globalOp(words);
  const ops: Op[] = [];
  // The words between two numbers name the step between them; where they name none, the whole text decides.
  const at = tokens.map((t, i) => (t.kind === 'number' ? i : -1)).filter((i) => i >= 0);
  for (let n = 1; n < at.length; n++) {
    const gap = tokens.slice(at[n - 1]! + 1, at[n]).map((t) => t.word);
    const local = classesIn(gap, STRONG);
    if (local.size > 1) return { kind: 'unsure', reason: 'two operations between two numbers' };
    const op = local.size === 1 ? [...local][0]! : fallback;
    if (op === 'unsure') return { kind: 'unsure', reason: 'no single operation named' };
    ops.push(op);
  }
  // With more than two numbers, mixed steps need each step named; a product or quotient among them is not read.
  if (ops.length > 1 && ops.some((o) => o === 'multiply' || o === 'divide')) return { kind: 'unsure', reason: 'a product or quotient among several numbers' };
  let result = numbers[0]!.value;
  for (let n = 0; n < ops.length; n++) {
    const next = apply(result, ops[n]!, numbers[n + 1]!.value);
    if (next === undefined) return { kind: 'unsure', reason: 'a division whose order is unclear' };
    result = next;
  }
  if (!Number.isFinite(result)) return { kind: 'unsure', reason: 'no finite result' };
  return { kind: 'answer', answer: result.toFixed(2), numbers: numbers.map((t) => t.value), ops };
}
