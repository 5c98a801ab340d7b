// Issue 26, finding 7: cheap disguises of a known key. Of 17 disguises, 8 leaked; the redactor now undoes the
// first four before matching (zero-width characters, full-width letters, JSON `\u` escapes, quoted-printable soft
// breaks) and replaces what it finds in the original text. The other four (rot13, base32, base64 of base64,
// reversed) still leak, as README "Security model" says: an agent can encode its own key any way it likes, and
// its key's scope, not redaction, is the defence there. The table records which are caught, both ways.
import { performance } from 'node:perf_hooks';
import { describe, expect, it } from 'vitest';
import { REDACTED, Redactor } from '../../services/redact.ts';
import { Prng } from '../support/prng.ts';

// A known key with characters that encode differently in each scheme, and no well-known shape.
const KEY = 'Kx7/qP2+vN9=mR4-tW1_zB8';

const rot13 = (s: string): string => s.replace(/[A-Za-z]/g, (c) => String.fromCharCode(((c.toLowerCase().charCodeAt(0) - 97 + 13) % 26) + (c <= 'Z' ? 65 : 97)));
const fullWidth = (s: string): string => s.replace(/[!-~]/g, (c) => String.fromCharCode(c.charCodeAt(0) + 0xfee0));
const jsonEscapes = (s: string): string => [...s].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join('');

function base32(s: string): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  let bits = '';
  for (const b of Buffer.from(s)) bits += b.toString(2).padStart(8, '0');
  let out = '';
  for (let i = 0; i < bits.length; i += 5) out += alphabet[parseInt(bits.slice(i, i + 5).padEnd(5, '0'), 2)];
  return out;
}

/** The 17 disguises of the finding, and whether the redactor catches each. */
const DISGUISES: Array<[name: string, disguise: (key: string) => string, caught: boolean]> = [
  // Caught before this change.
  ['as it is', (k) => k, true],
  ['base64', (k) => Buffer.from(k).toString('base64'), true],
  ['base64url', (k) => Buffer.from(k).toString('base64url'), true],
  ['hex', (k) => Buffer.from(k).toString('hex'), true],
  ['upper-case hex', (k) => Buffer.from(k).toString('hex').toUpperCase(), true],
  ['URL-encoded', (k) => encodeURIComponent(k), true],
  ['inside JSON', (k) => JSON.stringify({ key: k }), true],
  ['split across lines', (k) => k.replace(/(.{6})/g, '$1\n'), true],
  ['split by escaped line breaks and indentation', (k) => k.replace(/(.{5})/g, '$1\\n    '), true],
  // The eight that leaked: the first four are caught now.
  ['zero-width characters between letters', (k) => [...k].join('\u200b'), true],
  ['full-width letters', fullWidth, true],
  ['JSON \\u escapes', jsonEscapes, true],
  ['a = soft line break (quoted-printable)', (k) => `${k.slice(0, 9)}=\r\n${k.slice(9)}`, true],
  ['rot13', rot13, false],
  ['base32', base32, false],
  ['base64 of base64', (k) => Buffer.from(Buffer.from(k).toString('base64')).toString('base64'), false],
  ['reversed', (k) => [...k].reverse().join(''), false],
];

describe('disguises of a known key', () => {
  const r = new Redactor([KEY]);

  it('the table has the 17 disguises, 13 caught and 4 left to key scoping', () => {
    expect(DISGUISES).toHaveLength(17);
    expect(DISGUISES.filter(([, , caught]) => caught)).toHaveLength(13);
  });

  it.each(DISGUISES.map(([name, disguise, caught]) => ({ name, disguise, caught })))('$name (caught: $caught)', ({ disguise, caught }) => {
    const disguised = disguise(KEY);
    expect(disguised).not.toBe('');
    const out = r.redact(`before ${disguised} after`);
    // The middle of the disguised value, where no neighbouring character can change it.
    const middle = disguised.slice(4, -4);
    expect(!out.includes(middle), out).toBe(caught);
    expect(out.includes(REDACTED), out).toBe(caught);
    // What is around a hit is left exactly as written.
    expect(out.startsWith('before ')).toBe(true);
    expect(out.endsWith(' after')).toBe(true);
  });

  it('mixed disguises at once (zero-width joiners inside full-width letters)', () => {
    const out = r.redact(`key: ${[...fullWidth(KEY)].join('\u200d')}.`);
    expect(out).toBe(`key: ${REDACTED}.`);
  });

  it('a = soft line break with JSON-escaped line breaks, as in a logged e-mail body', () => {
    const out = r.redact(JSON.stringify({ body: `token ${KEY.slice(0, 12)}=\n${KEY.slice(12)} end` }));
    expect(out).not.toContain(KEY.slice(3, 10));
    expect(out).not.toContain(KEY.slice(13, -2));
    expect(JSON.parse(out)).toEqual({ body: `token ${REDACTED} end` });
  });

  it('replaces the hit in the original text: full-width text around it stays full-width', () => {
    const around = fullWidth('hello');
    expect(r.redact(`${around} ${[...KEY].join('\u200b')} ${around}`)).toBe(`${around} ${REDACTED} ${around}`);
  });
});

describe('disguised well-known shapes, values unknown', () => {
  const r = new Redactor([]);
  it.each([
    ['AWS key id, zero-width spaces', [...'AKIAIOSFODNN7EXAMPL3'].join('\u200b')],
    ['AWS key id, full-width', fullWidth('AKIAIOSFODNN7EXAMPL3')],
    ['hub agent key, \\u escapes', jsonEscapes(`botburrow_agent_${'ab'.repeat(32)}`)],
    ['GitHub token, soft hyphens', [...'ghp_1a2B3c4D5e6F7g8H9i0JkLmNoPqRsTuVwXyZ'].join('\u00ad')],
  ])('%s', (_name, disguised) => {
    const out = r.redact(`see ${disguised} now`);
    expect(out).toBe(`see ${REDACTED} now`);
  });
});

describe('no over-redaction of text that merely looks disguised', () => {
  it('accents, emoji, full-width prose, \\u escapes of ordinary words and = line ends stay as they are', () => {
    const text = [
      'Café crème — naïve façade 🙂 ｆｕｌｌ ｗｉｄｔｈ prose, ﬁne ligatures.',
      'JSON says \\u0048\\u0069 and "caf\\u00e9"; a zero\u200bwidth space in a word.',
      'x = 1 =',
      'base64 padding at line ends: SGVsbG8=',
      'c2Vjb25k',
    ].join('\n');
    expect(new Redactor([KEY, 'another-known-secret-value']).redact(text)).toBe(text);
  });
});

describe('cost', () => {
  it('1 MB of text full of disguises (full-width words, zero-width characters, \\u escapes, soft breaks) stays linear', () => {
    const prng = new Prng(26);
    const r = new Redactor([KEY]);
    const words = ['the', 'model', fullWidth('answered'), 'tool\u200bresult', jsonEscapes('thread'), 'line=\n', 'café', '🙂', '\n'];
    const parts: string[] = [];
    let size = 0;
    let planted = 0;
    while (size < 1_000_000) {
      let word = prng.pick(words);
      if (prng.chance(0.002)) {
        word = prng.pick(DISGUISES.slice(0, 13))[1](KEY);
        planted++;
      }
      parts.push(word);
      size += word.length + 1;
    }
    const text = parts.join(' ');
    const t0 = performance.now();
    const out = r.redact(text);
    const ms = performance.now() - t0;
    console.log(`redact: ${(text.length / 1e6).toFixed(2)} MB of disguises, ${planted} planted keys: ${ms.toFixed(0)} ms`);
    expect(planted).toBeGreaterThan(50);
    expect(out.split(REDACTED).length - 1).toBeGreaterThanOrEqual(planted);
    // Generous: a linear pass takes well under a second here; quadratic behaviour takes minutes.
    expect(ms).toBeLessThan(5_000);
  });
});
