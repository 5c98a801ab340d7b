// Posts longer than Bluesky's limits (pure): cut into a chain of posts at white space, each at most `max`
// graphemes and `maxBytes` bytes of UTF-8 (app.bsky.feed.post's text: maxGraphemes 300, maxLength 3000 bytes;
// 300 long emoji pass the first and not the second), so a long answer arrives whole as a reply chain rather than
// refused.
const segmenter = new Intl.Segmenter(undefined, { granularity: 'grapheme' });
const utf8 = new TextEncoder();

export const MAX_GRAPHEMES = 300;
export const MAX_POST_BYTES = 3000;

export function graphemeLength(text: string): number {
  let n = 0;
  for (const _ of segmenter.segment(text)) n++;
  return n;
}

/** `text` in parts of at most `max` graphemes and `maxBytes` bytes, cut at the last white space of each part where there is one. */
export function splitPost(text: string, max = MAX_GRAPHEMES, maxBytes = MAX_POST_BYTES): string[] {
  const graphemes = [...segmenter.segment(text.trim())].map((s) => s.segment);
  const parts: string[] = [];
  let at = 0;
  while (at < graphemes.length) {
    let end = at;
    let bytes = 0;
    while (end < graphemes.length && end - at < max) {
      const b = utf8.encode(graphemes[end]).length;
      if (bytes + b > maxBytes) break;
      bytes += b;
      end++;
    }
    if (end === at) end = at + 1; // one grapheme over the byte limit alone: sent as it is (the server decides)
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
