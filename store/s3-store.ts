// Agent definitions from S3-compatible object storage (S3, R2, MinIO), in the same layout as the folder.
// Each object is cached for its agent's `cache_ttl` (the store default for skills and prompts), then
// revalidated with If-None-Match so an unchanged object costs a 304 and no body. A poll notices changes
// without reading objects: through the manifest (one conditional GET) when the bucket has a current one,
// else by listing and comparing ETags.
import { GetObjectCommand, ListObjectsV2Command, PutObjectCommand, S3Client, S3ServiceException } from '@aws-sdk/client-s3';
import type { Problem } from './problems.ts';
import { StoreUnavailableError, type DefinitionStore, type LoadResult } from './definition.ts';
import { loadFromReader, type StoreReader } from './layout.ts';
import { cacheAction, type CachedObject } from './object-cache.ts';
import { listingDigest, MANIFEST_KEY, manifestOf, parseManifest, type Manifest } from './s3-manifest.ts';
import { formatS3Url, type S3Location } from './s3-location.ts';

export interface S3StoreOptions {
  location: S3Location;
  /** e.g. `https://<account>.r2.cloudflarestorage.com` or `http://127.0.0.1:9000`; the AWS endpoint when unset. */
  endpoint?: string;
  region?: string;
  /** Path-style URLs (`endpoint/bucket/key`): needed by MinIO and most S3 look-alikes. */
  forcePathStyle?: boolean;
  credentials?: { accessKeyId: string; secretAccessKey: string };
  /** TTL of objects whose agent has no `cache_ttl` yet (skills, prompts, a first read). */
  defaultTtlMs?: number;
  /** How often `watch` lists the bucket to compare ETags. */
  pollIntervalMs?: number;
  /** SDK attempts per request; the reloader retries a failed load with its own backoff. */
  maxAttempts?: number;
  /** Per-request timeout. */
  requestTimeoutMs?: number;
  /** Clock, for tests. */
  now?: () => number;
}

/** Requests made, so tests (and curious operators) can see what the cache saved. */
export interface S3StoreStats {
  lists: number;
  gets: number;
  /** GETs that returned a body. */
  bodies: number;
  /** GETs answered 304 Not Modified. */
  notModified: number;
  /** Reads served from the cache without a request. */
  cacheHits: number;
  /** Conditional GETs of the manifest (a poll of an unchanged bucket with a current manifest is one of these). */
  manifestReads: number;
}

export class S3Store implements DefinitionStore {
  readonly location: string;
  readonly stats: S3StoreStats = { lists: 0, gets: 0, bodies: 0, notModified: 0, cacheHits: 0, manifestReads: 0 };
  readonly #client: S3Client;
  readonly #loc: S3Location;
  readonly #cache = new Map<string, CachedObject>();
  /** cache_ttl of each agent as last loaded, by agent folder. */
  readonly #agentTtl = new Map<string, number>();
  readonly #defaultTtlMs: number;
  readonly #pollIntervalMs: number;
  readonly #now: () => number;
  readonly #requestTimeoutMs: number;
  #lastDigest: string | undefined;
  /** The manifest's ETag while the bucket has one that matches its listing; undefined: polls list the bucket. */
  #manifestEtag: string | undefined;

  constructor(opts: S3StoreOptions) {
    this.#loc = opts.location;
    this.location = formatS3Url(opts.location);
    this.#defaultTtlMs = opts.defaultTtlMs ?? 300_000;
    this.#pollIntervalMs = opts.pollIntervalMs ?? 30_000;
    this.#now = opts.now ?? Date.now;
    this.#requestTimeoutMs = opts.requestTimeoutMs ?? 15_000;
    this.#client = new S3Client({
      endpoint: opts.endpoint,
      region: opts.region ?? 'auto',
      forcePathStyle: opts.forcePathStyle ?? true,
      credentials: opts.credentials,
      maxAttempts: opts.maxAttempts ?? 2,
      requestHandler: { connectionTimeout: 5_000 },
      // Checksums only where the protocol demands them: R2, MinIO and s3rver do not all speak the newer defaults.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    });
  }

  async load(): Promise<LoadResult> {
    const listed = await this.#list();
    const manifestEtag = listed.get(MANIFEST_KEY);
    const listing = new Map([...listed].filter(([k]) => k !== MANIFEST_KEY));
    this.#lastDigest = listingDigest(listing);
    const stale = manifestEtag === undefined ? undefined : await this.#checkManifest();
    const result = await loadFromReader(new S3Reader(this, listing));
    if (stale) result.problems.push(stale);
    this.#agentTtl.clear();
    for (const a of result.agents) this.#agentTtl.set(a.name, a.config.cache_ttl * 1000);
    // Forget objects that are gone, so the cache never grows past the bucket.
    for (const key of this.#cache.keys()) if (!listing.has(key)) this.#cache.delete(key);
    return result;
  }

  watch(onChange: () => void): () => void {
    let busy = false;
    const timer = setInterval(() => {
      if (busy) return;
      busy = true;
      this.#changed()
        .then((changed) => {
          if (changed) onChange();
        })
        // Unreachable during a poll: nothing to compare; the next poll (or the reloader's retry) tries again.
        .catch(() => undefined)
        .finally(() => (busy = false));
    }, this.#pollIntervalMs);
    timer.unref();
    return () => clearInterval(timer);
  }

  close(): void {
    this.#client.destroy();
  }

  /** Lists the bucket and writes its manifest (`warren manifest`): from then on an unchanged bucket costs one request a poll. */
  async writeManifest(now = new Date()): Promise<Manifest> {
    const manifest = manifestOf(await this.#list(), now);
    try {
      await this.#client.send(
        new PutObjectCommand({ Bucket: this.#loc.bucket, Key: this.#loc.prefix + MANIFEST_KEY, Body: `${JSON.stringify(manifest, null, 2)}\n`, ContentType: 'application/json' }),
        this.#deadline(),
      );
    } catch (err) {
      throw new StoreUnavailableError(this.location, `writing ${MANIFEST_KEY} failed: ${describe(err)}`, { cause: err });
    }
    return manifest;
  }

  /** Whether the bucket changed since the last load: the manifest's ETag when it is trusted, else the listing. */
  async #changed(): Promise<boolean> {
    if (this.#manifestEtag !== undefined) {
      const read = await this.#readManifest(this.#manifestEtag);
      if (read === 'unchanged') return false;
      if (read !== 'gone') return read.manifest.fingerprint !== this.#lastDigest;
      this.#manifestEtag = undefined; // deleted: back to listing
    }
    return listingDigest(await this.#list()) !== this.#lastDigest;
  }

  /** After a load: trust the manifest only when it stands for the listing just read; a warning when it does not. */
  async #checkManifest(): Promise<Problem | undefined> {
    this.#manifestEtag = undefined;
    const read = await this.#readManifest(undefined);
    if (read === 'unchanged' || read === 'gone') return undefined;
    if (read.manifest.fingerprint === this.#lastDigest) {
      this.#manifestEtag = read.etag;
      return undefined;
    }
    return {
      file: this.displayName(MANIFEST_KEY),
      field: 'fingerprint',
      message: 'does not match the bucket (objects changed after it was written): run `warren manifest` after each upload; until then daemons notice changes by listing the bucket',
      severity: 'warning',
    };
  }

  async #readManifest(etag: string | undefined): Promise<'unchanged' | 'gone' | { etag: string; manifest: Manifest }> {
    this.stats.manifestReads++;
    try {
      const res = await this.#client.send(new GetObjectCommand({ Bucket: this.#loc.bucket, Key: this.#loc.prefix + MANIFEST_KEY, IfNoneMatch: etag }), this.#deadline());
      const manifest = parseManifest((await res.Body?.transformToString('utf8')) ?? '');
      // Not a manifest (a stray file of that name): as good as none.
      return manifest && res.ETag ? { etag: res.ETag, manifest } : 'gone';
    } catch (err) {
      if (statusOf(err) === 304) return 'unchanged';
      if (statusOf(err) === 404) return 'gone';
      throw new StoreUnavailableError(this.location, `reading ${MANIFEST_KEY} failed: ${describe(err)}`, { cause: err });
    }
  }

  /** Every key under the prefix (relative to it) with its ETag. */
  async #list(): Promise<Map<string, string>> {
    const out = new Map<string, string>();
    let token: string | undefined;
    try {
      do {
        this.stats.lists++;
        const page = await this.#client.send(new ListObjectsV2Command({ Bucket: this.#loc.bucket, Prefix: this.#loc.prefix, ContinuationToken: token }), this.#deadline());
        for (const o of page.Contents ?? []) {
          if (o.Key && o.ETag) out.set(o.Key.slice(this.#loc.prefix.length), o.ETag);
        }
        token = page.IsTruncated ? page.NextContinuationToken : undefined;
      } while (token);
    } catch (err) {
      throw new StoreUnavailableError(this.location, `listing failed: ${describe(err)}`, { cause: err });
    }
    return out;
  }

  /** One object through the cache; undefined when it does not exist. */
  async read(key: string, listedEtag: string | undefined): Promise<string | undefined> {
    if (listedEtag === undefined) {
      this.#cache.delete(key);
      return undefined; // not in the listing: it does not exist (or not yet)
    }
    const entry = this.#cache.get(key);
    const action = cacheAction(entry, this.#now(), this.#ttlOf(key), listedEtag);
    if (action.kind === 'use-cached' && entry) {
      this.stats.cacheHits++;
      return entry.text;
    }
    this.stats.gets++;
    try {
      const res = await this.#client.send(
        new GetObjectCommand({ Bucket: this.#loc.bucket, Key: this.#loc.prefix + key, IfNoneMatch: action.kind === 'revalidate' ? action.etag : undefined }),
        this.#deadline(),
      );
      const text = (await res.Body?.transformToString('utf8')) ?? '';
      this.stats.bodies++;
      this.#cache.set(key, { etag: res.ETag ?? listedEtag, text, confirmedAt: this.#now() });
      return text;
    } catch (err) {
      if (entry && statusOf(err) === 304) {
        this.stats.notModified++;
        entry.confirmedAt = this.#now();
        return entry.text;
      }
      if (statusOf(err) === 404) {
        this.#cache.delete(key);
        return undefined;
      }
      throw new StoreUnavailableError(this.location, `reading ${key} failed: ${describe(err)}`, { cause: err });
    }
  }

  displayName(key: string): string {
    return formatS3Url(this.#loc, key);
  }

  /** A store that accepts connections but never answers must not hang a reload: it counts as unreachable. */
  #deadline(): { abortSignal: AbortSignal } {
    return { abortSignal: AbortSignal.timeout(this.#requestTimeoutMs) };
  }

  #ttlOf(key: string): number {
    const agent = /^agents\/([^/]+)\//.exec(key)?.[1];
    return (agent === undefined ? undefined : this.#agentTtl.get(agent)) ?? this.#defaultTtlMs;
  }
}

class S3Reader implements StoreReader {
  readonly #store: S3Store;
  readonly #listing: ReadonlyMap<string, string>;

  constructor(store: S3Store, listing: ReadonlyMap<string, string>) {
    this.#store = store;
    this.#listing = listing;
  }

  keys(): Promise<string[]> {
    return Promise.resolve([...this.#listing.keys()]);
  }

  read(key: string): Promise<string | undefined> {
    return this.#store.read(key, this.#listing.get(key));
  }

  displayName(key: string): string {
    return this.#store.displayName(key);
  }
}

function statusOf(err: unknown): number | undefined {
  if (err instanceof S3ServiceException) return err.$metadata.httpStatusCode;
  return (err as { $metadata?: { httpStatusCode?: number } } | null)?.$metadata?.httpStatusCode;
}

function describe(err: unknown): string {
  if (err instanceof Error) {
    const code = (err as { code?: unknown }).code;
    return typeof code === 'string' && !err.message.includes(code) ? `${err.message} (${code})` : err.message || err.name;
  }
  return String(err);
}
