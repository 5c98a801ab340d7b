// Identical changes run once (docs/agent-loop.md R2, "Duplicates"). A mutating call (same tool, same canonical
// arguments) that repeats one already made in the same reply is not run: it is answered with a result naming the
// call it repeats. A model that writes one post four times in a reply means one post, and idempotency keys cannot
// tell (they are per call). Across steps only hub writes are held to this, against the activation's last hub
// write that succeeded: a tool without a readOnly annotation counts as mutating (R4), and many read tools of MCP
// servers carry none, so refusing every repeat across steps would stop an agent from polling; a post is never
// meant twice. Read-only calls may repeat. Pure: the step decides, the runner answers.
import { fingerprint } from './loop-guard.ts';
import type { ToolResultStatus } from './events.ts';
import type { ToolCall } from './messages.ts';
import type { PreparedCall } from './tool-repair.ts';
import type { Tool } from './tools.ts';

/** Outcomes of calls that reached their tool, so may have changed something; the others changed nothing. */
const REACHED_THE_TOOL: ReadonlySet<ToolResultStatus> = new Set<ToolResultStatus>(['ok', 'error', 'timed_out', 'cancelled']);

/** A call not run because it repeats `of`; answered with `message` as a `rejected` result. */
export interface DuplicateCall {
  kind: 'duplicate';
  call: ToolCall;
  tool: Tool;
  message: string;
}

/** A call a person denied (approval-gate.ts): not run, answered with `message` as a `denied` result. */
export interface DeniedCall {
  kind: 'denied';
  call: ToolCall;
  tool: Tool;
  message: string;
}

/** A call as the step hands it to the runner. */
export type PlannedCall = PreparedCall | DuplicateCall | DeniedCall;

/**
 * The reply's calls with repeated changes marked. `past` is the activation's results so far, in order;
 * `isHubWrite` says whether a tool of that name (today's registry) writes to the hub.
 */
export function markDuplicates(calls: readonly PreparedCall[], past: readonly { call: ToolCall; status: ToolResultStatus }[], isHubWrite: (name: string) => boolean): Array<PreparedCall | DuplicateCall> {
  // Only the last hub write counts, and only when it succeeded: after another write (post x, post y, post x)
  // the same call may mean something again, and after a failure an identical call is a retry.
  const lastChange = [...past].reverse().find((r) => REACHED_THE_TOOL.has(r.status) && isHubWrite(r.call.name));
  let previous = lastChange?.status === 'ok' ? { fp: fingerprint(lastChange.call), id: lastChange.call.id } : undefined;
  const inReply = new Map<string, string>();
  return calls.map((c) => {
    if (c.kind !== 'ready' || c.tool.readOnly) return c;
    const fp = fingerprint(c.call);
    // In one reply every copy was written before any result was seen: none of them can be a retry.
    const of = inReply.get(fp) ?? (previous?.fp === fp ? previous.id : undefined);
    if (of === undefined) {
      inReply.set(fp, c.call.id);
      // This write runs first, so the earlier one is no longer the last.
      if (isHubWrite(c.call.name)) previous = undefined;
      return c;
    }
    return { kind: 'duplicate', call: c.call, tool: c.tool, message: `Not run: this call is a duplicate of call ${of} (${c.call.name} with identical arguments), and identical changes run once. That call's result stands; do not repeat it.` };
  });
}
