// The redactor's known-secret search as it was before services/needle-index.ts: every form of every secret,
// longest first, one indexOf scan each (skipping overlaps of a form with itself), each learn re-sorting them all.
// Kept as the reference the differential test holds the index to, and that bench/redact.ts times it against.
import { hasSoftBreak, normalise, spanOf } from '../../services/normalised-text.ts';
import { formsOf, redactHits } from '../../services/redact.ts';

export class ReferenceRedactor {
  readonly #known = new Set<string>();
  #needles: string[] = [];

  constructor(secrets: readonly string[]) {
    this.learn(secrets);
  }

  learn(secrets: readonly string[]): void {
    const needles = new Set(this.#needles);
    for (const s of secrets) {
      if (s.length < 8 || this.#known.has(s)) continue;
      this.#known.add(s);
      for (const f of formsOf(s)) if (f.length >= 8) needles.add(f);
    }
    this.#needles = [...needles].sort((a, b) => b.length - a.length);
  }

  redact(text: string): string {
    const known = { splits: true, softBreaks: false };
    const passes = [normalise(text, known)];
    if (hasSoftBreak(text)) passes.push(normalise(text, { ...known, softBreaks: true }));
    const hits: Array<[number, number]> = [];
    for (const n of passes) {
      for (const needle of this.#needles) {
        for (let i = n.flat.indexOf(needle); i !== -1; i = n.flat.indexOf(needle, i + needle.length)) hits.push(spanOf(n, i, i + needle.length));
      }
    }
    return redactHits(text, hits);
  }
}
