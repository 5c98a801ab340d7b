// The `X-Hub-Signature-256: sha256=<hex>` form GitHub made common: an HMAC-SHA256 of the raw body with a shared
// secret. Inbound webhooks check it; outbound events carry it, so a receiver checks warren the same way.
import { createHmac, timingSafeEqual } from 'node:crypto';

/** The header both directions use. */
export const SIGNATURE_HEADER = 'x-hub-signature-256';

/** `sha256=<hex>` of `body` under `secret`. */
export function signBody(secret: string, body: string | Buffer): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

/** Whether `header` is the signature of `body` under `secret`; compared in constant time, any malformed header false. */
export function signatureMatches(secret: string, body: string | Buffer, header: string | undefined): boolean {
  if (typeof header !== 'string' || !/^sha256=[0-9a-fA-F]{64}$/.test(header.trim())) return false;
  const given = Buffer.from(header.trim().slice('sha256='.length).toLowerCase(), 'hex');
  const wanted = Buffer.from(signBody(secret, body).slice('sha256='.length), 'hex');
  return given.length === wanted.length && timingSafeEqual(given, wanted);
}
