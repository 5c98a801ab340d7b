// Record keys for posts (pure). app.bsky.feed.post records are keyed by a TID: 13 base32-sortable characters of
// a 64-bit number, microseconds since the epoch shifted past a 10-bit clock id. warren picks the key before the
// first attempt of a write and keeps it (state.ts), so every retry writes the same record, never a second one.
const ALPHABET = '234567abcdefghijklmnopqrstuvwxyz';

/** The TID of `micros` (since the epoch) and `clock` (0–1023). */
export function tidOf(micros: number, clock: number): string {
  let n = (BigInt(Math.floor(micros)) << 10n) | BigInt(clock & 1023);
  let out = '';
  for (let i = 0; i < 13; i++) {
    out = ALPHABET[Number(n & 31n)]! + out;
    n >>= 5n;
  }
  return out;
}

export function isTid(s: string): boolean {
  return /^[234567abcdefghij][234567abcdefghijklmnopqrstuvwxyz]{12}$/.test(s);
}
