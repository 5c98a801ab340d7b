// Per-object cache of a remote store: the text with its ETag and when it was last confirmed current.
// The decision of what to do with a cached object is a pure function, so it is tested without a server.

export interface CachedObject {
  etag: string;
  text: string;
  /** When the server last confirmed this version (a full read or a 304). */
  confirmedAt: number;
}

export type CacheAction =
  /** Fresh and, as far as the listing tells, unchanged: no request at all. */
  | { kind: 'use-cached' }
  /** Ask the server with If-None-Match: a 304 carries no body. */
  | { kind: 'revalidate'; etag: string }
  /** Nothing cached: plain read. */
  | { kind: 'fetch' };

/**
 * `listedEtag` is the ETag the latest listing reported: when it differs from the cached one the object changed,
 * so the TTL does not matter; when it matches, the cache is used until the TTL runs out, then revalidated.
 */
export function cacheAction(entry: CachedObject | undefined, now: number, ttlMs: number, listedEtag: string | undefined): CacheAction {
  if (!entry) return { kind: 'fetch' };
  const changed = listedEtag !== undefined && listedEtag !== entry.etag;
  if (!changed && now - entry.confirmedAt < ttlMs) return { kind: 'use-cached' };
  return { kind: 'revalidate', etag: entry.etag };
}

/** A fingerprint of a listing: equal fingerprints mean nothing was added, removed or changed. */
export function listingFingerprint(objects: ReadonlyMap<string, string>): string {
  return [...objects.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([k, e]) => `${k}\t${e}`).join('\n');
}
