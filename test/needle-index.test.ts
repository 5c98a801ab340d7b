// The needle index (services/needle-index.ts): every occurrence of every needle from one scan of the text.
import { describe, expect, it } from 'vitest';
import { FEW_NEEDLES, NeedleIndex } from '../services/needle-index.ts';

/** `fewNeedles` 0: the rolling scan; FEW_NEEDLES: one indexOf per needle (the cases hold fewer). Both must agree. */
function found(needles: string[], text: string, fewNeedles: number): Array<[number, number]> {
  const index = new NeedleIndex(fewNeedles);
  for (const n of needles) index.add(n);
  const hits: Array<[number, number]> = [];
  index.find(text, (start, end) => hits.push([start, end]));
  return hits.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
}

describe('NeedleIndex', () => {
  const cases: Array<{ name: string; needles: string[]; text: string; hits: Array<[number, number]> }> = [
    { name: 'none known', needles: [], text: 'abcdefghijkl', hits: [] },
    { name: 'text shorter than the window', needles: ['abcdefgh'], text: 'abcdefg', hits: [] },
    { name: 'the whole text', needles: ['abcdefgh'], text: 'abcdefgh', hits: [[0, 8]] },
    { name: 'at the start and at the end', needles: ['abcdefgh'], text: 'abcdefgh--abcdefgh', hits: [[0, 8], [10, 18]] },
    { name: 'longer than the window', needles: ['0123456789abcdef'], text: 'x0123456789abcdefx', hits: [[1, 17]] },
    { name: 'a different head with the same tail is not a hit', needles: ['XX23456789abcdef'], text: 'x0123456789abcdefx', hits: [] },
    { name: 'the tail without room for the head', needles: ['0123456789abcdef'], text: '89abcdef', hits: [] },
    { name: 'needles sharing a tail', needles: ['aa12345678', 'bb12345678', '12345678'], text: 'aa12345678 bb12345678', hits: [[0, 10], [2, 10], [11, 21], [13, 21]] },
    { name: 'needles sharing a head', needles: ['prefix__one1', 'prefix__two2'], text: 'prefix__two2', hits: [[0, 12]] },
    { name: 'overlapping occurrences of one needle, each', needles: ['aaaaaaaa'], text: 'aaaaaaaaaa', hits: [[0, 8], [1, 9], [2, 10]] },
    { name: 'a needle inside another', needles: ['abcdefghij', 'cdefghij'], text: '-abcdefghij-', hits: [[1, 11], [3, 11]] },
    { name: 'beyond ASCII', needles: ['ключ-секрет'], text: 'это ключ-секрет.', hits: [[4, 15]] },
  ];
  for (const c of cases) {
    it(`${c.name} (scan)`, () => expect(found(c.needles, c.text, 0)).toEqual(c.hits));
    it(`${c.name} (one indexOf per needle)`, () => expect(found(c.needles, c.text, FEW_NEEDLES)).toEqual(c.hits));
  }

  it('the filter grows with the needles and still lets every one through', () => {
    const index = new NeedleIndex(0);
    const needles = Array.from({ length: 5_000 }, (_, i) => `needle-${i.toString(36).padStart(4, '0')}-tail${i % 97}`);
    for (const n of needles) index.add(n);
    const text = needles.join('|');
    const hits: string[] = [];
    index.find(text, (start, end) => hits.push(text.slice(start, end)));
    expect(hits.sort()).toEqual([...needles].sort());
  });

  it('a needle added twice is filed once', () => {
    const index = new NeedleIndex();
    expect([index.add('abcdefgh'), index.add('abcdefgh'), index.add('xbcdefgh'), index.add('xbcdefgh')]).toEqual([true, false, true, false]);
    expect(index.size).toBe(2);
  });

  it('refuses a needle shorter than the window', () => {
    expect(() => new NeedleIndex().add('short')).toThrow(RangeError);
  });
});
