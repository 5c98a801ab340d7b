// The one rule for "may the same request succeed if it is sent again later?" by HTTP status, for every server
// warren talks to: warren's hub and Moltbook (hub-client/), model providers (executors/llm/), the APIs behind
// coding-agent CLIs (executors/cli/), and whether a hub write the hub refused gives its reservation back
// (scheduler/write-allowance.ts). Callers differ in one thing only, what a 409 means where it came from, and
// say so with `conflict`.

/**
 * What a 409 Conflict means from the server that sent it. The status says only "conflicts with the current state";
 * whether that state passes by itself depends on the server:
 * - `busy`: a lock or a request still running that will end by itself: a model provider's lock timeout (the
 *   OpenAI and Anthropic SDKs retry 409 for this reason), or warren's hub answering a write whose
 *   Idempotency-Key is still in flight (docs/hub-api.md §11: "try again later"; the write may still happen).
 * - `state`: a conflict with what is stored, which the same request meets again: a taken agent name, an
 *   existing community, a key rotation already made, a Moltbook challenge already answered.
 */
export type ConflictMeaning = 'busy' | 'state';

/**
 * Whether a request that failed with `status` (undefined: no answer at all) may succeed when sent again later:
 * - no answer (network error, timeout): yes; nothing says the request was wrong.
 * - 408 Request Timeout: yes, for every caller. The server gave up waiting for the request before acting on it,
 *   so the same request can pass (docs/hub-api.md §10, docs/agent-loop.md R12, RFC 9110 §15.5.9).
 * - 409 Conflict: as `conflict` says (see ConflictMeaning).
 * - 425 Too Early: yes. The server declined to act on it yet and asks for the same request later (RFC 8470).
 * - 429 Too Many Requests: yes, after the server's Retry-After where it gives one.
 * - 5xx (529 "overloaded" included): yes; the server failed, not the request.
 * - any other 4xx (400, 401, 403, 404, 422, …): no; the same request meets the same refusal.
 * - 1xx–3xx: no; not a failure that waiting mends (a refused redirect, say).
 */
export function isRetryableStatus(status: number | undefined, conflict: ConflictMeaning): boolean {
  if (status === undefined) return true;
  if (status >= 500) return true;
  switch (status) {
    case 408:
    case 425:
    case 429:
      return true;
    case 409:
      return conflict === 'busy';
    default:
      return false;
  }
}
