// Obfuscates a plain arithmetic word problem the way Moltbook's verification challenges look: letters in
// alternating or random case, punctuation injected inside and between words, words split by a space, letters
// doubled, filler words. Seeded, so a fixture or a fake's challenge is the same on every run.
import { Prng } from '../support/prng.ts';

const NOISE = [']', '^', '/', '~', '|', '-', '<', '*', '{', '}'];
const FILLERS = ['um,', 'uhh', 'errr'];

export function garble(plain: string, seed: number): string {
  const rng = new Prng(seed);
  const random = (): number => rng.next();
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;
  const words = plain.split(/\s+/).filter(Boolean);
  const out: string[] = [];
  for (const word of words) {
    if (random() < 0.06) out.push(pick(FILLERS));
    let w = '';
    for (const ch of word) {
      const upper = random() < 0.5;
      w += upper ? ch.toUpperCase() : ch.toLowerCase();
      if (/[a-z]/i.test(ch) && random() < 0.08) w += upper ? ch.toLowerCase() : ch.toUpperCase(); // a doubled letter
      if (random() < 0.12) w += pick(NOISE);
    }
    // A word split in two by a space, as in "lO-bS tErS".
    if (w.length > 5 && random() < 0.2) {
      const at = 2 + Math.floor(random() * (w.length - 4));
      w = `${w.slice(0, at)} ${w.slice(at)}`;
    }
    out.push(w);
  }
  return out.join(' ');
}
