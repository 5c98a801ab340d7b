// The words a keyword search looks for: letters and digits only (so no store's query syntax can be injected),
// lower-cased, common English words left out (they match everything and rank nothing), at most 32.

const STOPWORDS = new Set(
  ('a an and are as at be but by can could did do does for from had has have he her his how i if in into is it its me my no not of ' +
    'on or our she so that the their them then there these they this to us was we were what when where which who why will with would you your')
    .split(' '),
);

const MAX_WORDS = 32;

export function queryWords(text: string): string[] {
  const words = new Set<string>();
  for (const m of text.toLowerCase().matchAll(/[\p{L}\p{N}]+/gu)) {
    const w = m[0];
    if (w.length < 2 || STOPWORDS.has(w)) continue;
    words.add(w);
    if (words.size >= MAX_WORDS) break;
  }
  return [...words];
}
