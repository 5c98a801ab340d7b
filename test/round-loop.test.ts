// The loop the tickers run on: rounds never overlap, a failing round is told and the loop goes on, stop waits for
// the round running and no round starts after it.
import { describe, expect, it } from 'vitest';
import { RoundLoop } from '../scheduler/round-loop.ts';
import { waitFor } from './support/hub-api.ts';

describe('RoundLoop', () => {
  it('runs rounds one at a time, goes on after a failure, and stops after the running round', async () => {
    let running = 0;
    let overlap = false;
    let rounds = 0;
    const errors: unknown[] = [];
    const loop = new RoundLoop(
      async () => {
        running++;
        overlap ||= running > 1;
        rounds++;
        await new Promise((r) => setTimeout(r, 15));
        running--;
        if (rounds === 2) throw new Error('round two fails');
      },
      1,
      (err) => errors.push(err),
    );
    loop.start();
    loop.start(); // a second start is no second loop
    await waitFor('five rounds', () => (rounds >= 5 ? true : undefined), 10_000, 5);
    await loop.stop();
    const after = rounds;
    expect(running).toBe(0);
    await new Promise((r) => setTimeout(r, 60));
    expect(rounds).toBe(after);
    expect(overlap).toBe(false);
    expect(errors.map((e) => (e as Error).message)).toEqual(['round two fails']);
  });
});
