// Issue 32: known secrets were searched for with one indexOf scan per form of each, so a redaction's cost grew
// with the number of secrets (12 ms a redaction at 10,000). They are now found with one scan of the text
// (services/needle-index.ts). Here the new search is held to the old one, written out below as the reference,
// over generated texts with secrets in every form the redactor knows, at 1, 50 and 2,000 known secrets.
import { describe, expect, it } from 'vitest';
import { formsOf, REDACTED, Redactor } from '../../services/redact.ts';
import { ReferenceRedactor } from '../support/reference-redactor.ts';
import { Prng } from '../support/prng.ts';


/** Whether some proper prefix of `s` is also its suffix: only then can two occurrences of `s` overlap. */
function hasBorder(s: string): boolean {
  // KMP failure function: the longest proper prefix of s that is also its suffix.
  const fail = new Array<number>(s.length).fill(0);
  for (let i = 1, k = 0; i < s.length; i++) {
    while (k > 0 && s[i] !== s[k]) k = fail[k - 1]!;
    if (s[i] === s[k]) k++;
    fail[i] = k;
  }
  return fail[s.length - 1]! > 0;
}

// Letters, digits and characters every encoding writes differently (space, # / + = % & é), none shaped like a key.
const ALPHABET = 'abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789#/+=-_.%& é';
const WORDS = ['the', 'build', 'failed', 'while', 'calling', 'upstream', 'with', 'value', 'see', 'log', 'line', 'retry', 'later', '{"a":1}', 'ok,', '—', 'naïve', '\n'];

/**
 * Secrets none of whose forms has a border: no form can then occur overlapping itself in any text, so the old
 * search (which skipped such overlaps) and the new one must give the same output, character for character.
 */
function borderlessSecrets(rng: Prng, count: number): string[] {
  const out = new Set<string>();
  while (out.size < count) {
    let s = '';
    for (let n = 8 + rng.int(33); s.length < n; ) s += rng.pick([...ALPHABET]);
    const forms = formsOf(s);
    if (forms[0]!.length < 8 || forms.some(hasBorder)) continue;
    out.add(s);
  }
  return [...out];
}

const zeroWidth = (s: string, rng: Prng): string => [...s].map((c) => (rng.chance(0.3) ? `${c}\u200b` : c)).join('');
const splitBy = (s: string, rng: Prng, sep: string): string => {
  const at = 1 + rng.int(s.length - 1);
  return `${s.slice(0, at)}${sep}${s.slice(at)}`;
};
const fullWidth = (s: string): string => s.replace(/[A-Za-z0-9]/g, (c) => String.fromCharCode(c.charCodeAt(0) + 0xfee0));

/** How a secret is written into a text: the forms the redactor knows and the disguises it undoes. */
const WRITINGS: Array<[string, (s: string, rng: Prng) => string]> = [
  ['plain', (s) => s],
  ['JSON-escaped', (s) => JSON.stringify(s).slice(1, -1)],
  ['URL', (s) => encodeURIComponent(s)],
  ['URL, lower-case escapes', (s) => encodeURIComponent(s).replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase())],
  ['hex', (s) => Buffer.from(s).toString('hex')],
  ['HEX', (s) => Buffer.from(s).toString('hex').toUpperCase()],
  ['base64 inside a longer value', (s, rng) => Buffer.concat([Buffer.from('x'.repeat(rng.int(3))), Buffer.from(s), Buffer.from('y'.repeat(rng.int(3)))]).toString('base64')],
  ['base64url', (s) => Buffer.from(s).toString('base64url')],
  ['split by a line break', (s, rng) => splitBy(s, rng, '\n    ')],
  ['split by an escaped line break', (s, rng) => splitBy(s, rng, '\\n')],
  ['quoted-printable soft break', (s, rng) => splitBy(s, rng, '=\n')],
  ['zero-width characters', (s, rng) => zeroWidth(s, rng)],
  ['full-width', (s) => fullWidth(s)],
  // Not a hit: one character changed, or a part of the secret only.
  ['near miss', (s) => `${s.slice(0, -1)}${s.at(-1) === 'Q' ? 'R' : 'Q'}`],
  ['a part only', (s) => s.slice(0, Math.max(1, s.length - 3))],
];

function textWith(rng: Prng, secrets: readonly string[]): string {
  const parts: string[] = [];
  for (let n = 20 + rng.int(200); parts.length < n; ) {
    if (rng.chance(0.08)) parts.push(rng.pick(WRITINGS)[1](rng.pick(secrets), rng));
    else parts.push(rng.pick(WORDS));
  }
  return parts.join(rng.chance(0.5) ? ' ' : ', ');
}

describe('known secrets: one scan agrees with one indexOf per form', () => {
  for (const [count, texts] of [
    [1, 400],
    [50, 400],
    [2_000, 150],
  ] as const) {
    it(`${count} known secret(s), ${texts} generated texts`, () => {
      const rng = new Prng(3200 + count);
      const secrets = borderlessSecrets(rng, count);
      const reference = new ReferenceRedactor(secrets);
      const redactor = new Redactor(secrets);
      let redacted = 0;
      for (let t = 0; t < texts; t++) {
        const text = textWith(rng, secrets);
        const expected = reference.redact(text);
        expect(redactor.redact(text), text).toBe(expected);
        if (expected.includes(REDACTED)) redacted++;
      }
      // The texts did hold secrets: the comparison was not between two untouched texts.
      expect(redacted).toBeGreaterThan(texts / 2);
    });
  }

  it('every form of the generator is caught (and near misses are not)', () => {
    const rng = new Prng(7);
    const [secret] = borderlessSecrets(rng, 1) as [string];
    const redactor = new Redactor([secret]);
    for (const [name, write] of WRITINGS) {
      const out = redactor.redact(`before ${write(secret, rng)} after`);
      if (name === 'near miss' || name === 'a part only') expect(out, name).not.toContain(REDACTED);
      // Base64 keeps the characters at either end that carry its neighbours' bits (here up to 2 bytes either side).
      else if (name.startsWith('base64')) expect(out, name).toMatch(/^before [A-Za-z0-9+/_-]{0,6}\[REDACTED\][A-Za-z0-9+/=_-]{0,8} after$/);
      else expect(out, name).toBe(`before ${REDACTED} after`);
    }
  });

  it('occurrences of a secret overlapping each other are all hidden (the old search left the tail of the second)', () => {
    const secret = 'ab12ab12ab'; // period 4: "ab12ab12ab12ab" holds it at 0 and at 4
    const text = 'x ab12ab12ab12ab y';
    expect(new ReferenceRedactor([secret]).redact(text)).toBe(`x ${REDACTED}12ab y`);
    expect(new Redactor([secret]).redact(text)).toBe(`x ${REDACTED} y`);
  });
});

describe('many secrets learned one by one', () => {
  it('10,000 per-agent keys with one head, each learned alone, are all found', () => {
    const rng = new Prng(10_000);
    const redactor = new Redactor([]);
    // One head for all, as per-agent keys of one kind have; a name no shape knows, so only the known search can hide them.
    const keys = Array.from({ length: 10_000 }, (_, i) => `fleetkey-${i.toString(36)}-${Array.from({ length: 24 }, () => rng.pick([...'abcdefghjkmnpqrstuvwxyz23456789'])).join('')}`);
    for (const key of keys) redactor.learn([key]);
    for (let i = 0; i < keys.length; i += 100) {
      const batch = keys.slice(i, i + 100);
      expect(redactor.redact(batch.map((k) => `<${k}>`).join(' '))).toBe(batch.map(() => `<${REDACTED}>`).join(' '));
      // And encoded: hex and base64 of one of them.
      const k = batch[0]!;
      expect(redactor.redact(`hex ${Buffer.from(k).toString('hex')} b64 ${Buffer.from(k).toString('base64')}.`)).toMatch(/^hex \[REDACTED\] b64 \[REDACTED\][A-Za-z0-9+/=]{0,4}\.$/);
    }
  });
});
