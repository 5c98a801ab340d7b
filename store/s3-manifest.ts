// The S3 store's manifest (README "The definitions store"): one small object at the prefix's root that stands for
// the whole listing, so a daemon's poll of an unchanged bucket is one conditional GET answered 304, however many
// agents the bucket holds (a listing costs one request per 1,000 objects, from every daemon, every poll). The
// manifest is only trusted while it matches what the bucket lists: a stale one (objects uploaded without
// `warren manifest`) is reported, and changes are then found by listing as without one.
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { listingFingerprint } from './object-cache.ts';

/** The manifest's key, relative to the store's prefix; not a layout key, so the loader never reads it as a definition. */
export const MANIFEST_KEY = 'warren-manifest.json';

export const ManifestSchema = z.strictObject({
  version: z.literal(1),
  /** sha256 of the listing (every key but the manifest, with its ETag). */
  fingerprint: z.string().regex(/^[0-9a-f]{64}$/),
  objects: z.number().int().nonnegative(),
  written_at: z.string(),
});
export type Manifest = z.infer<typeof ManifestSchema>;

/** The digest of a listing (pure): equal digests mean nothing was added, removed or changed. */
export function listingDigest(listing: ReadonlyMap<string, string>): string {
  const rest = new Map([...listing].filter(([k]) => k !== MANIFEST_KEY));
  return createHash('sha256').update(listingFingerprint(rest)).digest('hex');
}

/** The manifest of a listing (pure). */
export function manifestOf(listing: ReadonlyMap<string, string>, now: Date): Manifest {
  const objects = [...listing.keys()].filter((k) => k !== MANIFEST_KEY).length;
  return { version: 1, fingerprint: listingDigest(listing), objects, written_at: now.toISOString() };
}

/** A manifest's text, or undefined when it is not one (a stray file of that name is ignored, not trusted). */
export function parseManifest(text: string): Manifest | undefined {
  try {
    const parsed = ManifestSchema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}
