// Many fixed strings ("needles", every form of every secret the daemon knows) found in a text with one scan, at a
// cost that does not grow with how many there are: each needle is filed under a hash of its last WINDOW
// characters; the scan rolls the same hash over the text and checks only the needles filed under each window's
// hash. A fleet with a key per agent knows 10,000–100,000 secrets, ~12 forms each; one indexOf scan per needle
// cost 33 ms per 8 KB redaction at 10,000 (bench/redact.ts).

/** Needles shorter than this are not accepted (the redactor does not hide shorter values). */
export const WINDOW = 8;

const BASE = 0x01000193;
/** BASE^(WINDOW-1) mod 2^32: the weight of the character leaving the window. */
const TOP = Array.from({ length: WINDOW - 1 }).reduce<number>((p) => Math.imul(p, BASE), 1);
/** A bit per slot, ≥ 8 slots per hash filed: most windows of a text are turned away there, before the map. */
const SLOTS_PER_KEY = 8;
const MIN_LOG_SLOTS = 10;
/**
 * Up to this many needles, one native indexOf scan each is cheaper than the rolling scan (≈ 4 ns a character,
 * against ≈ 0.3 µs an 8 KB text for one indexOf): a daemon that knows a few secrets pays no more than before.
 */
export const FEW_NEEDLES = 32;

function hashOf(s: string, from: number): number {
  let h = 0;
  for (let k = from; k < from + WINDOW; k++) h = (Math.imul(h, BASE) + s.charCodeAt(k)) | 0;
  return h;
}

/** The map key of a window's hash: its top 30 bits, a small integer V8 stores unboxed (collisions cost a failed check). */
const keyOf = (h: number): number => h >>> 2;

export class NeedleIndex {
  /** Hash key of a needle's last WINDOW characters → the needle, or the needles, filed under it (most hold one). */
  readonly #byTail = new Map<number, string | string[]>();
  #size = 0;
  #logSlots = MIN_LOG_SLOTS;
  /** A bit per slot (a key's top bits), set for every key filed. */
  #filter = new Uint32Array(2 ** (MIN_LOG_SLOTS - 5));
  readonly #fewNeedles: number;

  /** `fewNeedles`: up to how many needles to search with indexOf rather than the scan (tests set 0 for the scan). */
  constructor(fewNeedles = FEW_NEEDLES) {
    this.#fewNeedles = fewNeedles;
  }

  get size(): number {
    return this.#size;
  }

  /**
   * Files `needle` (at least WINDOW characters); false when it was there already. O(1) amortised. Its tail, not
   * its head, is hashed: keys of one kind share their head (`botburrow_agent_`, `sk-proj-`, `moltbook_`, and so
   * their hex and base64 too), which would put every agent's key under one hash and check them all wherever one
   * appears.
   */
  add(needle: string): boolean {
    if (needle.length < WINDOW) throw new RangeError(`needle shorter than ${WINDOW} characters`);
    const key = keyOf(hashOf(needle, needle.length - WINDOW));
    const filed = this.#byTail.get(key);
    if (filed === undefined) {
      this.#byTail.set(key, needle);
      this.#mark(key);
    } else if (typeof filed === 'string') {
      if (filed === needle) return false;
      this.#byTail.set(key, [filed, needle]);
    } else {
      if (filed.includes(needle)) return false;
      filed.push(needle);
    }
    this.#size++;
    return true;
  }

  /** Sets the key's filter bit; doubles the filter (re-marking every key: amortised O(1) an add) when it fills. */
  #mark(key: number): void {
    if (this.#byTail.size * SLOTS_PER_KEY <= 2 ** this.#logSlots) return this.#setBit(key);
    while (this.#byTail.size * SLOTS_PER_KEY > 2 ** this.#logSlots) this.#logSlots++;
    this.#filter = new Uint32Array(2 ** (this.#logSlots - 5));
    for (const k of this.#byTail.keys()) this.#setBit(k);
  }

  #setBit(key: number): void {
    const slot = key >>> (30 - this.#logSlots);
    this.#filter[slot >>> 5]! |= 1 << (slot & 31);
  }

  /** Calls `hit(start, end)` for every occurrence of every needle in `text`, overlapping ones included, in no set order. */
  find(text: string, hit: (start: number, end: number) => void): void {
    if (this.#size === 0 || text.length < WINDOW) return;
    if (this.#size <= this.#fewNeedles) return this.#findEach(text, hit);
    const map = this.#byTail;
    const filter = this.#filter;
    const shift = 30 - this.#logSlots;
    let h = hashOf(text, 0);
    for (let end = WINDOW; ; end++) {
      const key = keyOf(h);
      const slot = key >>> shift;
      const filed = (filter[slot >>> 5]! >>> (slot & 31)) & 1 ? map.get(key) : undefined;
      if (filed !== undefined) {
        if (typeof filed === 'string') check(text, filed, end, hit);
        else for (const needle of filed) check(text, needle, end, hit);
      }
      if (end === text.length) return;
      h = (Math.imul(h - Math.imul(text.charCodeAt(end - WINDOW), TOP), BASE) + text.charCodeAt(end)) | 0;
    }
  }

  /** The few-needles search: one indexOf scan per needle, every start (as the scan finds them). */
  #findEach(text: string, hit: (start: number, end: number) => void): void {
    for (const filed of this.#byTail.values()) {
      for (const needle of typeof filed === 'string' ? [filed] : filed) {
        for (let i = text.indexOf(needle); i !== -1; i = text.indexOf(needle, i + 1)) hit(i, i + needle.length);
      }
    }
  }
}

function check(text: string, needle: string, end: number, hit: (start: number, end: number) => void): void {
  const start = end - needle.length;
  if (start >= 0 && text.startsWith(needle, start)) hit(start, end);
}
