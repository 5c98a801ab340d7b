// Before a stored conversation is continued (a resumed run), its tool calls are paired again (docs/agent-loop.md
// R5): a run cut off mid-turn leaves calls without results, and a crash between writes can leave results
// twice or without their call. Providers reject all three with a 400, so the loop never sends them.
import type { ChatMessage } from './messages.ts';

/** Content of the result made up for a call that never got one. */
export const INTERRUPTED_RESULT = 'cancelled: the run was interrupted before this call returned a result; it may or may not have taken effect';

export interface HistoryRepair {
  messages: ChatMessage[];
  /** What was changed, one line each (for a loop_warning). */
  repairs: string[];
}

/**
 * Pairs every tool call with exactly one result, right after its assistant turn (pure). Missing results
 * become explicit `cancelled` results; duplicate results and results without a call are dropped; a call id
 * issued twice keeps its first issue. Everything else keeps its order.
 */
export function repairHistory(history: readonly ChatMessage[]): HistoryRepair {
  const messages: ChatMessage[] = [];
  const repairs: string[] = [];
  const issued = new Set<string>();
  let open: Map<string, string> | undefined; // call id → tool name, of the latest assistant turn
  const closeTurn = (): void => {
    for (const [id, name] of open ?? []) {
      messages.push({ role: 'tool', toolCallId: id, name, content: INTERRUPTED_RESULT });
      repairs.push(`call ${id} (${name}) had no result: marked cancelled`);
    }
    open = undefined;
  };
  for (const m of history) {
    if (m.role === 'tool') {
      if (open?.has(m.toolCallId)) {
        open.delete(m.toolCallId);
        messages.push(m);
      } else repairs.push(`result for ${m.toolCallId} ${issued.has(m.toolCallId) ? 'repeated or out of place' : 'without its call'}: dropped`);
      continue;
    }
    closeTurn();
    if (m.role === 'assistant' && m.toolCalls?.length) {
      const calls = m.toolCalls.filter((c) => {
        if (!issued.has(c.id)) return true;
        repairs.push(`call ${c.id} issued twice: the repeat dropped`);
        return false;
      });
      for (const c of calls) issued.add(c.id);
      open = new Map(calls.map((c) => [c.id, c.name]));
      // A turn left with neither text nor calls is no message a provider accepts.
      if (calls.length || m.content) messages.push(calls.length === m.toolCalls.length ? m : { ...m, toolCalls: calls.length ? calls : undefined });
      continue;
    }
    messages.push(m);
  }
  closeTurn();
  return { messages, repairs };
}
