// The challenge solver against a corpus written in the style of Moltbook's verification challenges: it answers
// nearly all exactly and says "unsure" on the rest, since every wrong answer counts towards a suspension.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { degarble, solveChallenge } from '../hub-client/moltbook/challenge.ts';
import { challengeQuestion, parseModelAnswer, timeToAsk } from '../hub-client/moltbook/challenge-fallback.ts';
import { garble } from './fakes/moltbook-garble.ts';

const corpus = JSON.parse(readFileSync('test/fixtures/moltbook/challenges.json', 'utf8')) as Array<{ plain: string; challenge: string; answer: string }>;

describe('challenge solver', () => {
  it('answers at least 95 % of the corpus exactly and is unsure, never wrong, on the rest', () => {
    expect(corpus.length).toBeGreaterThanOrEqual(40);
    const results = corpus.map((c) => ({ c, r: solveChallenge(c.challenge) }));
    const exact = results.filter(({ c, r }) => r.kind === 'answer' && r.answer === c.answer);
    const wrong = results.filter(({ c, r }) => r.kind === 'answer' && r.answer !== c.answer);
    expect(wrong.map(({ c, r }) => ({ challenge: c.challenge, expected: c.answer, got: r }))).toEqual([]);
    expect(exact.length / corpus.length).toBeGreaterThanOrEqual(0.95);
  });

  it('reads garbled words back: case, injected punctuation, split and doubled letters, fillers', () => {
    expect(degarble('A] lO-bS tErS^ cLaW eX|eRtS tW/eNn-TyY fIiVe NeWtOnS, um, aNd iT lO~sEs fI vE')).toEqual(
      ['a', 'lobs', 'ters', 'claw', 'exerts', 'twenty', 'five', 'newtons', 'and', 'it', 'loses', 'five'],
    );
  });

  it('reads compound numbers, scales and decimals', () => {
    expect(solveChallenge('one hundred and twenty liters minus thirty five')).toMatchObject({ kind: 'answer', answer: '85.00', numbers: [120, 35] });
    expect(solveChallenge('one thousand two hundred five plus ninety nine')).toMatchObject({ answer: '1304.00' });
    expect(solveChallenge('fourteen point five newtons plus 2.25 newtons')).toMatchObject({ answer: '16.75' });
    expect(solveChallenge('seven shrimp divided between two lobsters')).toMatchObject({ answer: '3.50' });
    expect(solveChallenge('eleven times twelve')).toMatchObject({ answer: '132.00', ops: ['multiply'] });
  });

  it('is unsure rather than guessing', () => {
    expect(solveChallenge('a lobster doubles its twelve pebbles').kind).toBe('unsure'); // one number
    expect(solveChallenge('twenty newtons plus five minus three times two').kind).toBe('unsure'); // a product among several steps
    expect(solveChallenge('twenty lobsters and five crabs, how many').kind).toBe('unsure'); // no operation named
    expect(solveChallenge('two lobsters share ten shrimp').kind).toBe('unsure'); // the dividend is not the first number
    expect(solveChallenge('ten divided by zero').kind).toBe('unsure');
    expect(solveChallenge('the total is forty and it loses twenty remaining plus three hundred hundred').kind).toBe('unsure'); // a number that does not read
  });

  it('stays nearly always right over many garblings of the corpus (a word split next to a number word can fool it)', () => {
    let wrong = 0;
    let exact = 0;
    let n = 0;
    for (let seed = 1; seed <= 40; seed++) {
      for (const c of corpus) {
        const r = solveChallenge(garble(c.plain, seed * 7919 + 1));
        n++;
        if (r.kind !== 'answer') continue;
        if (r.answer === c.answer) exact++;
        else wrong++;
      }
    }
    // Measured: 2 wrong in 2,200 ("eight y ears" reads as eighty, "w eight" as eight).
    expect(wrong / n).toBeLessThan(0.005);
    expect(exact / n).toBeGreaterThan(0.9);
  });
});

/** A problem with no operation named: the solver must be unsure of it (the daemon test asks the model). */
const UNSURE_PROBLEM = { plain: 'A lobster has twenty claws and ninety legs, what is the count of its limbs?', answer: '110.00' };

describe('model fallback for challenges', () => {
  it('is needed for a problem that names no operation', () => {
    for (let seed = 1; seed < 5; seed++) expect(solveChallenge(garble(UNSURE_PROBLEM.plain, seed)).kind).toBe('unsure');
  });

  it('takes one plain number from the model, with two decimals, and nothing else', () => {
    expect(parseModelAnswer('110')).toBe('110.00');
    expect(parseModelAnswer(' 110.5 \n')).toBe('110.50');
    expect(parseModelAnswer('-3.25')).toBe('-3.25');
    for (const bad of ['110 newtons', 'The answer is 110', '110, 120', '', 'one hundred', '1e3', undefined]) expect(parseModelAnswer(bad)).toBeUndefined();
  });

  it('asks only with time left before the challenge expires, and frames the challenge as data', () => {
    const now = Date.parse('2026-11-24T10:00:00Z');
    expect(timeToAsk('2026-11-24T10:00:10Z', now)).toBe(8_000);
    expect(timeToAsk('2026-11-24T10:00:02Z', now)).toBeUndefined();
    expect(timeToAsk(undefined, now)).toBe(30_000);
    const q = challengeQuestion('tWeNtY cLaWs');
    expect(q).toContain('<<<\ntWeNtY cLaWs\n>>>');
    expect(q).toMatch(/number only/);
  });
});
