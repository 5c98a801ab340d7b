// The Bluesky adapter's pure decisions: record keys, splitting long posts, which notifications are work, and how
// far the account's read time may move.
import { describe, expect, it } from 'vitest';
import { isTid, tidOf } from '../hub-client/bluesky/tid.ts';
import { graphemeLength, MAX_POST_BYTES, splitPost } from '../hub-client/bluesky/split-text.ts';
import { seenAtAfter, toNotification, workOf, type WireNotification } from '../hub-client/bluesky/work.ts';

const wire = (over: Partial<WireNotification> & { uri: string }): WireNotification => ({
  cid: 'cid', reason: 'mention', indexedAt: '2026-01-01T00:00:00.000Z', author: { did: 'did:plc:human', handle: 'human.test' }, record: { text: 'hi' }, ...over,
});

describe('bluesky pure decisions', () => {
  it.each([
    { micros: 0, clock: 0, tid: '2222222222222' },
    { micros: 1_700_000_000_000_000, clock: 5, tid: tidOf(1_700_000_000_000_000, 5) },
  ])('tidOf($micros, $clock) is a TID', ({ micros, clock, tid }) => {
    expect(tidOf(micros, clock)).toBe(tid);
    expect(isTid(tidOf(micros, clock))).toBe(true);
  });

  it('orders TIDs as their times', () => {
    expect(tidOf(1_700_000_000_000_001, 0) > tidOf(1_700_000_000_000_000, 1023)).toBe(true);
  });

  it.each([
    { text: 'short', max: 300, parts: ['short'] },
    { text: 'aaa bbb ccc', max: 7, parts: ['aaa bbb', 'ccc'] },
    { text: 'abcdefghij', max: 4, parts: ['abcd', 'efgh', 'ij'] },
    { text: '👍🏽👍🏽👍🏽', max: 2, parts: ['👍🏽👍🏽', '👍🏽'] },
    { text: '   ', max: 10, parts: [] },
  ])('splitPost($text, $max)', ({ text, max, parts }) => {
    const out = splitPost(text, max);
    expect(out).toEqual(parts);
    for (const p of out) expect(graphemeLength(p)).toBeLessThanOrEqual(max);
  });

  it('keeps each part within the 3000 bytes a post\'s text may take too (300 long emoji are more)', () => {
    const family = '👨‍👩‍👧‍👦'; // one grapheme, 25 bytes in UTF-8
    const out = splitPost(family.repeat(200));
    expect(out.map(graphemeLength)).toEqual([120, 80]);
    for (const p of out) expect(Buffer.byteLength(p, 'utf8')).toBeLessThanOrEqual(MAX_POST_BYTES);
    expect(out.join('')).toBe(family.repeat(200));
  });

  it.each([
    { reason: 'mention', record: { text: 'hi @a' }, type: 'mention', post: 'at://h/p/1' },
    { reason: 'quote', record: { text: 'q' }, type: 'mention', post: 'at://h/p/1' },
    { reason: 'reply', record: { text: 'r', reply: { root: { uri: 'at://x/p/root' }, parent: { uri: 'at://x/p/par' } } }, type: 'reply', post: 'at://x/p/root' },
    // A reply that also @-mentions its parent's author arrives as a mention: its thread is still the record's.
    { reason: 'mention', record: { text: 'r @a', reply: { root: { uri: 'at://x/p/root' }, parent: { uri: 'at://x/p/par' } } }, type: 'mention', post: 'at://x/p/root' },
    { reason: 'like', record: {}, type: undefined, post: undefined },
    { reason: 'follow', record: {}, type: undefined, post: undefined },
  ])('a $reason notification', ({ reason, record, type, post }) => {
    const n = toNotification(wire({ uri: 'at://h/p/1', reason, record }));
    expect(n?.type).toBe(type);
    expect(n?.post_id).toBe(post);
    if (n) expect(n.comment_id).toBe('at://h/p/1');
  });

  it('leaves out its own posts and handled ones, oldest first', () => {
    const items = [
      wire({ uri: 'at://h/p/3', indexedAt: '2026-01-01T00:00:03.000Z' }),
      wire({ uri: 'at://h/p/1', indexedAt: '2026-01-01T00:00:01.000Z' }),
      wire({ uri: 'at://me/p/2', author: { did: 'did:plc:me', handle: 'me.test' } }),
      wire({ uri: 'at://h/p/4', indexedAt: '2026-01-01T00:00:04.000Z' }),
    ];
    expect(workOf(items, new Set(['at://h/p/4']), 'did:plc:me').map((n) => n.id)).toEqual(['at://h/p/1', 'at://h/p/3']);
  });

  it.each([
    { handled: [], seen: undefined },
    { handled: ['a'], seen: 't1' },
    { handled: ['a', 'b'], seen: 't2' },
    // b is still to be answered: the read time stops before it, whatever was handled after.
    { handled: ['a', 'c'], seen: 't1' },
    { handled: ['b', 'c'], seen: undefined },
  ])('seenAtAfter with $handled handled', ({ handled, seen }) => {
    const items = [{ id: 'c', created_at: 't3' }, { id: 'a', created_at: 't1' }, { id: 'b', created_at: 't2' }];
    expect(seenAtAfter(items, new Set(handled))).toBe(seen);
  });
});
