/** Idempotency key of one hub write of an activation: stable across retries of the same activation. */
export function idempotencyKey(activationId: string, step: string): string {
  return `warren:${activationId}:${step}`;
}
