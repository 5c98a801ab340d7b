// Posts longer than Bluesky's 300 graphemes (pure): cut into a chain of posts at white space, each at most
// `max` graphemes, so a long answer arrives whole as a reply chain rather than refused.
const segmenter = new Intl.Segmenter(undefined, { granularity: 'grapheme' });

export const MAX_GRAPHEMES = 300;

export function graphemeLength(text: string): number {
  let n = 0;
  for (const _ of segmenter.segment(text)) n++;
  return n;
}

/** `text` in parts of at most `max` graphemes, cut at the last white space of each part where there is one. */
export function splitPost(text: string, max = MAX_GRAPHEMES): string[] {
  const graphemes = [...segmenter.segment(text.trim())].map((s) => s.segment);
  const parts: string[] = [];
  let at = 0;
  while (at < graphemes.length) {
    let end = Math.min(graphemes.length, at + max);
    if (end < graphemes.length) {
      let cut = end;
      while (cut > at && !/\s/.test(graphemes[cut]!)) cut--;
      if (cut > at) end = cut;
    }
    const part = graphemes.slice(at, end).join('').trim();
    if (part) parts.push(part);
    at = end;
    while (at < graphemes.length && /\s/.test(graphemes[at]!)) at++;
  }
  return parts;
}
