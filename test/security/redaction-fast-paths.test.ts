// The redactor's two shortcuts, each held to what it stands for over generated text, so a shortcut can never hide
// less than the walk it replaces: flatten() (the text known secrets are searched in, without the map back to the
// original; one native replace where only splits are to be taken out) against normalise().flat, in every mode; and
// a shape's hint against its pattern (a text whose hint does not match is never searched with the pattern).
import { describe, expect, it } from 'vitest';
import { flatten, normalise, type NormaliseMode } from '../../services/normalised-text.ts';
import { Redactor, SHAPES } from '../../services/redact.ts';
import { Prng } from '../support/prng.ts';

const MODES: NormaliseMode[] = [
  { splits: true, softBreaks: false },
  { splits: true, softBreaks: true },
  { splits: false, softBreaks: true },
  { splits: false, softBreaks: false },
];

// Pieces that meet every branch: splits raw and JSON-escaped, an escaped backslash before n, `\u` escapes (valid and
// not), soft breaks, and the non-ASCII the walk undoes (zero-width, full-width, a surrogate pair) or keeps (é).
const PIECES = ['a', 'Z', '7', ' ', '  ', '\t', '\n', '\r\n', '\\n', '\\r', '\\t', '\\\\n', '\\u0041', '\\u00e9', '\\u12', '\\x', '=', '=\n', '=\\n', '=\\r\\n', '"', "'", ':', 'é', '\u200b', 'Ａ', '😀', '\u00a0', '\\'];

function text(rng: Prng, ascii: boolean): string {
  const pieces = ascii ? PIECES.filter((p) => [...p].every((c) => c.charCodeAt(0) < 128)) : PIECES;
  let out = '';
  for (let n = rng.int(40); n > 0; n--) out += rng.pick(pieces);
  return out;
}

describe('flatten', () => {
  it('is normalise().flat, character for character, in every mode (2,000 generated texts, ASCII only and not)', () => {
    const rng = new Prng(32);
    for (let i = 0; i < 2_000; i++) {
      const t = text(rng, i % 2 === 0);
      for (const mode of MODES) expect(flatten(t, mode), JSON.stringify({ t, mode })).toBe(normalise(t, mode).flat);
    }
  });

  it('a known secret split by a line break and indentation in plain ASCII is still found and hidden where it was', () => {
    const secret = 'k3y-Value-0123456789';
    const red = new Redactor([secret]);
    expect(red.redact(`before k3y-Value-01\n    23456789 after`)).toBe('before [REDACTED] after');
    expect(red.redact(`{"log":"k3y-Value-\\n0123456789"} tail`)).toBe('{"log":"[REDACTED]"} tail');
  });
});

describe("a shape's hint", () => {
  const NAMES = ['api_key', 'apikey', 'API-KEY', 'access_key', 'private-key', 'secret', 'Token', 'tokens', 'passwd', 'password', 'passw0rd', 'credential', 'credentials', 'Authorization', 'input_tokens', 'client_secret_v2', 'db.password.main', 'key', 'monkey'];
  const GLUE = ['', '_', '.', '-', 'x', '"', '\\"', "'", ' ', '   ', '\t', ':', '=', ': ', ' = ', '\n', 'Bearer ', 'Basic '];
  const VALUES = ['s3cr3t-value', '"quoted value"', "'single q'", '\\"escaped\\"', 'abc', 'Bearer abcdefgh', 'x'];

  it('matches every text its pattern matches (6,000 generated near-misses and hits per shape with a hint)', () => {
    const rng = new Prng(7);
    const texts: string[] = [];
    for (let i = 0; i < 6_000; i++) {
      let t = '';
      for (let n = 1 + rng.int(6); n > 0; n--) t += rng.pick([...NAMES, ...GLUE, ...VALUES, ...GLUE]);
      // Half shaped as an assignment (a name, its glue, a value), near misses included by the glue drawn.
      texts.push(i % 2 ? t : `${t}${rng.pick(NAMES)}${rng.pick(GLUE)}${rng.pick(GLUE)}${rng.pick(VALUES)}`);
    }
    const matched = new Map<string, number>();
    for (const shape of SHAPES) {
      if (shape.hint === undefined) continue;
      const hint = shape.hint;
      for (const t of texts) {
        shape.pattern.lastIndex = 0;
        if (!shape.pattern.test(t)) continue;
        matched.set(shape.id, (matched.get(shape.id) ?? 0) + 1);
        const held = typeof hint === 'string' ? t.includes(hint) : new RegExp(hint.source, hint.flags.replace('g', '')).test(t);
        expect(held, `${shape.id}: ${JSON.stringify(t)}`).toBe(true);
      }
      shape.pattern.lastIndex = 0;
    }
    // The generator reaches the patterns it is written for: a test that matched nothing would hold nothing.
    expect(matched.get('secret-assignment')).toBeGreaterThan(300);
    expect(matched.get('bearer')).toBeGreaterThan(100);
  });
});
