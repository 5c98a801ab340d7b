// store/memo.ts: a pure function's answers remembered by argument, with a bound on how many are kept.
import { describe, expect, it } from 'vitest';
import { memoized } from '../store/memo.ts';

describe('memoized', () => {
  it('asks the function once per argument and gives its answers, undefined ones included', () => {
    const asked: string[] = [];
    const f = memoized((k: string) => {
      asked.push(k);
      return k.startsWith('bad') ? `problem with ${k}` : undefined;
    });
    expect([f('a'), f('bad1'), f('a'), f('bad1'), f('b')]).toEqual([undefined, 'problem with bad1', undefined, 'problem with bad1', undefined]);
    expect(asked).toEqual(['a', 'bad1', 'b']);
  });

  it('keeps at most its bound of answers, asking again for one it let go', () => {
    const asked: string[] = [];
    const f = memoized((k: string) => asked.push(k), 2);
    for (const k of ['a', 'b', 'a', 'c', 'a']) f(k);
    // 'c' found the memory full (a, b) and started it over: 'a' is asked again.
    expect(asked).toEqual(['a', 'b', 'c', 'a']);
  });
});
