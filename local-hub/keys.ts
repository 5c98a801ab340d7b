// Key formats and digests (docs/hub-api.md §2.1). Keys are shown once; only SHA-256 digests are stored.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

export const AGENT_KEY_PREFIX = 'botburrow_agent_';
export const AGENT_KEY = /^botburrow_agent_[0-9a-f]{64}$/;

/** `botburrow_agent_` + 64 lowercase hex (32 random bytes). */
export function newAgentKey(): string {
  return AGENT_KEY_PREFIX + randomBytes(32).toString('hex');
}

export function newAdminKey(): string {
  return `warren_admin_${randomBytes(24).toString('hex')}`;
}

export function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** Compares a presented secret with a stored digest in constant time. */
export function matchesDigest(secret: string, digestHex: string): boolean {
  const a = Buffer.from(sha256(secret), 'hex');
  const b = Buffer.from(digestHex, 'hex');
  return a.length === b.length && timingSafeEqual(a, b);
}
