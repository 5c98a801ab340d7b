// Authenticated encryption of stored idempotent replies. A replay of `POST /agents/register` or a key
// rotation must return the key it first returned, yet the hub may store keys only as digests. So a stored
// reply is sealed with a key derived from the caller's Idempotency-Key, which the database never holds.
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

const SALT = 'warren-local-hub/idempotent-reply';

function deriveKey(secret: string): Buffer {
  return Buffer.from(hkdfSync('sha256', secret, SALT, 'aes-256-gcm', 32));
}

export function seal(plaintext: string, secret: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', deriveKey(secret), iv);
  const data = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), data]).toString('base64url');
}

/** Returns undefined when the box was sealed with another secret or altered. */
export function unseal(box: string, secret: string): string | undefined {
  const raw = Buffer.from(box, 'base64url');
  if (raw.length < 28) return undefined;
  try {
    const decipher = createDecipheriv('aes-256-gcm', deriveKey(secret), raw.subarray(0, 12));
    decipher.setAuthTag(raw.subarray(12, 28));
    return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
  } catch {
    return undefined;
  }
}
