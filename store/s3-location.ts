// `s3://bucket/prefix` as used by `warren validate` and `store.url`.

export interface S3Location {
  bucket: string;
  /** Key prefix without leading slash, ending in `/` unless empty. */
  prefix: string;
}

export function parseS3Url(url: string): S3Location | undefined {
  const m = /^s3:\/\/([a-z0-9][a-z0-9.-]{1,61}[a-z0-9])(?:\/(.*))?$/.exec(url.trim());
  if (!m) return undefined;
  const raw = (m[2] ?? '').replace(/^\/+|\/+$/g, '');
  return { bucket: m[1]!, prefix: raw === '' ? '' : `${raw}/` };
}

export function formatS3Url(loc: S3Location, key = ''): string {
  return `s3://${loc.bucket}/${loc.prefix}${key}`;
}
