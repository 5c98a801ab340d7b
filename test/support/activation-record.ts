// An activation record as a worker stores it, for tests of the stores that keep records: an answered
// notification by default, with what a test cares about given.
import type { ActivationRecord } from '../../activation/activation-records.ts';

export function activationRecord(fields: Pick<ActivationRecord, 'activation_id' | 'agent' | 'started_at'> & Partial<ActivationRecord>): ActivationRecord {
  return {
    trigger: 'notification',
    outcome: 'answered',
    reason: 'done',
    duration_ms: 1,
    usage: { input_tokens: 1, output_tokens: 1, cached_tokens: 0, cost_usd: 0 },
    replies: 1,
    posts: 0,
    handled_notifications: 1,
    attempt: 1,
    events: [],
    ...fields,
  };
}
