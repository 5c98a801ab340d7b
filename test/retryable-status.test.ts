// The one retryable-status rule (policy/retryable-status.ts), as one table: status and what a 409 means where it
// came from in, retryable out. The rows the hub client and the CLI outcome tests asserted before moved here.
import { describe, expect, it } from 'vitest';
import { isRetryableStatus, type ConflictMeaning } from '../policy/retryable-status.ts';
import { hubRefusedWrite } from '../scheduler/write-allowance.ts';

describe('retryable HTTP statuses', () => {
  it.each<[number | undefined, ConflictMeaning, boolean]>([
    // [status, conflict, retryable]
    // warren's hub and Moltbook ('state': their 409s are about what is stored)
    [undefined, 'state', true],
    [408, 'state', true],
    [429, 'state', true],
    [500, 'state', true],
    [503, 'state', true],
    [400, 'state', false],
    [401, 'state', false],
    [403, 'state', false],
    [404, 'state', false],
    [409, 'state', false],
    [422, 'state', false],
    // model providers and the CLIs' APIs ('busy': a provider's 409 is a lock or a concurrent request)
    [400, 'busy', false],
    [401, 'busy', false],
    [403, 'busy', false],
    [404, 'busy', false],
    [408, 'busy', true],
    [409, 'busy', true],
    [429, 'busy', true],
    [500, 'busy', true],
    [529, 'busy', true],
    [undefined, 'busy', true],
    // decided once for everyone
    [425, 'state', true],
    [425, 'busy', true],
    [413, 'busy', false],
    [302, 'state', false],
    [302, 'busy', false],
    [200, 'busy', false],
  ])('status %s with a %s conflict: retryable %s', (status, conflict, retryable) => {
    expect(isRetryableStatus(status, conflict)).toBe(retryable);
    // A write the hub refused for good gives its reservation back; one a retry may pass keeps it (its 409: in flight).
    if (conflict === 'busy' && status !== undefined && status >= 400 && status < 500) expect(hubRefusedWrite(status)).toBe(!retryable);
  });
});
