import { createHash } from 'node:crypto';

/** Idempotency key of one hub write of an activation: stable across retries of the same activation. */
export function idempotencyKey(activationId: string, step: string): string {
  return `warren:${activationId}:${step}`;
}

/** Marking read is keyed by what is marked, so any attempt marking the same set replays the same request. */
export function readKey(notificationIds: readonly string[]): string {
  const digest = createHash('sha256').update([...notificationIds].sort().join(',')).digest('hex').slice(0, 32);
  return `warren:read:${digest}`;
}
