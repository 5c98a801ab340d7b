import { describe, expect, it } from 'vitest';
import { ModelError } from '../agent-loop/model.ts';
import { parseMockResponses, ScriptedChatModel } from '../executors/llm/scripted-model.ts';
import { partitionInbox } from '../activation/inbox-policy.ts';
import type { Notification } from '../hub-client/types.ts';

const req = { model: 'm', messages: [{ role: 'user' as const, content: 'hello there' }] };

describe('scripted model', () => {
  it('answers in order, scripts tool calls with unique ids, and fails loudly when it runs out', async () => {
    const model = new ScriptedChatModel([
      'first',
      { tool_calls: [{ name: 'echo', arguments: { text: 'a' } }, { name: 'echo', arguments: '{"text":"b"}' }] },
      { content: 'done', usage: { prompt_tokens: 7, completion_tokens: 3 }, finish_reason: 'length' },
    ]);
    expect(await model.complete(req)).toMatchObject({ content: 'first', finishReason: 'stop', toolCalls: [], usage: { inputTokens: 0, outputTokens: 0 } });
    const second = await model.complete(req);
    expect(second.finishReason).toBe('tool_calls');
    expect(second.toolCalls.map((c) => c.arguments)).toEqual([{ text: 'a' }, { text: 'b' }]);
    expect(new Set(second.toolCalls.map((c) => c.id)).size).toBe(2);
    expect(await model.complete(req)).toMatchObject({ content: 'done', finishReason: 'length', usage: { inputTokens: 7, outputTokens: 3 } });
    await expect(model.complete(req)).rejects.toThrow(/no reply left/);
  });

  it('scripts errors with their retry classification and honours aborts during delays', async () => {
    const model = new ScriptedChatModel([{ error: { status: 429, retry_after: 2 } }, { error: { status: 401 } }, { content: 'late', delay_ms: 5_000 }]);
    const e429 = await model.complete(req).catch((e: unknown) => e);
    expect(e429).toBeInstanceOf(ModelError);
    expect(e429).toMatchObject({ status: 429, retryable: true, retryAfterMs: 2_000 });
    expect(await model.complete(req).catch((e: unknown) => e)).toMatchObject({ status: 401, retryable: false });
    const ac = new AbortController();
    const started = Date.now();
    setTimeout(() => ac.abort(), 50);
    await expect(model.complete({ ...req, signal: ac.signal })).rejects.toThrow(/aborted/);
    expect(Date.now() - started).toBeLessThan(1_000);
  });

  it('parses WARREN_MOCK_RESPONSES and explains bad values', () => {
    expect(parseMockResponses('["hi", {"tool_calls":[{"id":"call_1","name":"echo","arguments":{"text":"x"}}]}]')).toHaveLength(2);
    expect(() => parseMockResponses('[oops')).toThrow(/not valid JSON/);
    expect(() => parseMockResponses('[{"tool_calls":"nope"}]')).toThrow(/item 0/);
  });
});

describe('inbox policy', () => {
  const n = (id: string, type: Notification['type'], at: string): Notification => ({
    id, type, post_id: 'p', comment_id: null, from: { id: 'a', name: 'alice' }, content: '', created_at: at, read: false,
  });
  it('answers mentions and replies oldest first, and sets aside what the agent does not respond to', () => {
    const inbox = [n('2', 'reply', '2026-01-01T00:02:00Z'), n('1', 'mention', '2026-01-01T00:01:00Z'), n('3', 'like', '2026-01-01T00:00:00Z'), n('4', 'dm', '2026-01-01T00:03:00Z')];
    const all = partitionInbox(inbox, { respond_to_mentions: true, respond_to_replies: true, respond_to_dms: true });
    expect(all.actionable.map((x) => x.id)).toEqual(['1', '2', '4']);
    expect(all.ignorable.map((x) => x.id)).toEqual(['3']);
    const mentionsOnly = partitionInbox(inbox, { respond_to_mentions: true, respond_to_replies: false, respond_to_dms: false });
    expect(mentionsOnly.actionable.map((x) => x.id)).toEqual(['1']);
    expect(mentionsOnly.ignorable.map((x) => x.id).sort()).toEqual(['2', '3', '4']);
  });
});
