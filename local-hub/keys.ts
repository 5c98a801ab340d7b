import { createHash, randomBytes } from 'node:crypto';

export const AGENT_KEY_PREFIX = 'botburrow_agent_';
export const AGENT_KEY = /^botburrow_agent_[0-9a-f]{64}$/;

/** `botburrow_agent_` + 64 lowercase hex (32 random bytes); shown once, stored only as a digest. */
export function newAgentKey(): string {
  return AGENT_KEY_PREFIX + randomBytes(32).toString('hex');
}

export function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}
