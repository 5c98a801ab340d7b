// The bounds on what an agent's output may be (policy/output-bounds.ts) as tables: the one decision, the meter a
// streamed answer is read through, the check of a whole response, a CLI answer, and what a stored record keeps.
import { describe, expect, it } from 'vitest';
import { boundedRecord, MAX_RECORD_CHARS, RECORD_FIELD_CHARS, type ActivationRecord } from '../activation/activation-records.ts';
import type { ActivationEvent, ActivationEventBody } from '../agent-loop/events.ts';
import { OutputMeter, OversizedOutputError, oversizedUsage, oversizeOfResponse } from '../agent-loop/oversized-output.ts';
import { boundedAnswer } from '../executors/cli/outcome.ts';
import { AgentConfigSchema } from '../store/agent-config.ts';
import { DEFAULT_OUTPUT_BOUNDS, excerptOf, overBound, oversizeMessage } from '../policy/output-bounds.ts';

describe('overBound', () => {
  it.each([
    // [what, length, limit, cut, over?]
    ['answer', 10, 10, false, false],
    ['answer', 11, 10, false, true],
    ['tool_argument', 0, 10, false, false],
    ['cli_output', 4 * 1024 * 1024 + 1, DEFAULT_OUTPUT_BOUNDS.cliOutputBytes, true, true],
  ] as const)('%s of %i bytes against %i (cut %s): over %s', (what, length, limit, cut, over) => {
    expect(overBound(what, length, limit, cut)).toEqual(over ? { what, length, limit, cut } : undefined);
  });

  it('names the config key and the bound in its message', () => {
    expect(oversizeMessage({ what: 'answer', limit: 65536, length: 3_000_000, cut: false })).toBe('the answer was 3000000 bytes, more than behavior.limits.max_answer_bytes (65536 bytes): not posted and not tried again');
    expect(oversizeMessage({ what: 'tool_argument', limit: 10, length: 14, cut: true })).toBe("a tool call's arguments passed behavior.limits.max_tool_argument_bytes (10 bytes); reading stopped there: not posted and not tried again");
    expect(oversizeMessage({ what: 'cli_output', limit: 10, length: 14, cut: true })).toContain('behavior.limits.max_cli_output_bytes');
  });

  it('keeps the head of a long text and all of a short one', () => {
    expect(excerptOf('abc', 2)).toBe('ab…');
    expect(excerptOf('ab', 2)).toBe('ab');
  });

  it('are the agent config defaults, and each can be set per agent', () => {
    const base = { name: 'bee', type: 'llm', brain: { model: 'm' }, capabilities: { grants: [] } };
    expect(AgentConfigSchema.parse(base).behavior.limits).toMatchObject({ max_answer_bytes: 65536, max_tool_argument_bytes: 262144, max_cli_output_bytes: 4194304 });
    expect(AgentConfigSchema.parse({ ...base, behavior: { limits: { max_answer_bytes: 2048 } } }).behavior.limits.max_answer_bytes).toBe(2048);
    const bad = AgentConfigSchema.safeParse({ ...base, behavior: { limits: { max_tool_argument_bytes: 10 } } });
    expect(bad.success).toBe(false);
    expect(bad.error?.issues[0]?.path).toEqual(['behavior', 'limits', 'max_tool_argument_bytes']);
  });
});

describe('the meter of a streamed answer', () => {
  const bounds = { answerBytes: 8, toolArgumentBytes: 6 };

  it('throws at the piece that passes the answer bound, counting UTF-8 bytes', () => {
    const m = new OutputMeter(bounds);
    m.answer('abcd', () => 'abcd');
    m.answer('éé', () => 'abcdéé'); // 4 + 4 bytes: at the bound, not over it
    expect(() => m.answer('x', () => 'abcdééx')).toThrow(OversizedOutputError);
  });

  it('counts each tool call on its own', () => {
    const m = new OutputMeter(bounds);
    m.toolArgument(0, '{"a":', () => '');
    m.toolArgument(1, '{"b":', () => '');
    try {
      m.toolArgument(0, '12}', () => '{"a":12}');
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(OversizedOutputError);
      expect((err as OversizedOutputError).retryable).toBe(false);
      expect((err as OversizedOutputError).output).toEqual({ what: 'tool_argument', limit: 6, length: 8, cut: true, excerpt: '{"a":12}' });
    }
  });
});

describe('the cost of a cut call', () => {
  it('is its prompt and what was read of its output, at 4 bytes a token', () => {
    const err = new OversizedOutputError({ what: 'answer', limit: 8, length: 10, cut: true }, 'x');
    expect(oversizedUsage(err, 120)).toEqual({ inputTokens: 120, outputTokens: 3, cachedTokens: 0 });
  });
});

describe('a whole response', () => {
  const bounds = { answerBytes: 4, toolArgumentBytes: 8 };
  const res = (content: string | null, args: string[] = []) => ({ content, toolCalls: args.map((a, i) => ({ id: `c${i}`, name: 't', arguments: {}, rawArguments: a })), finishReason: 'stop', usage: { inputTokens: 0, outputTokens: 0, cachedTokens: 0 }, model: 'm' });

  it.each([
    ['a short answer', res('abcd'), undefined],
    ['a long answer', res('abcde'), 'answer'],
    ['no answer, short arguments', res(null, ['{"a":1}']), undefined],
    ['one long argument among short ones', res(null, ['{}', '{"a":123}']), 'tool_argument'],
  ] as const)('%s', (_name, r, what) => {
    expect(oversizeOfResponse(r, bounds)?.output.what).toBe(what);
  });
});

describe('a CLI answer', () => {
  const run = (text: string, posted = false) => ({ text, posted, termination: 'final' as const, partial: false, usage: { inputTokens: 1, outputTokens: 1, cachedTokens: 0 }, steps: 1 });

  it.each([
    ['within the bound: kept', run('abc'), 'final'],
    ['over the bound: an oversized error', run('abcdef'), 'error'],
    ['posted by the CLI itself: kept', run('', true), 'final'],
  ] as const)('%s', (_name, r, termination) => {
    const out = boundedAnswer(r, 4);
    expect(out.termination).toBe(termination);
    if (termination === 'error') expect(out).toMatchObject({ text: '', error: { retryable: false, oversized: { what: 'answer', limit: 4, length: 6, cut: false, excerpt: 'abcdef' } } });
  });
});

describe('a stored record', () => {
  let seq = 0;
  const ev = (body: ActivationEventBody): ActivationEvent => ({ ...body, seq: ++seq, activation_id: 'act-1', ts: '2026-01-01T00:00:00Z' });
  const record = (events: ActivationEvent[], error?: string): ActivationRecord => ({
    activation_id: 'act-1', agent: 'bee', trigger: 'notification', outcome: 'answered', reason: 'final', started_at: '', duration_ms: 1,
    usage: { input_tokens: 0, output_tokens: 0, cached_tokens: 0, cost_usd: 0 }, replies: 1, posts: 0, handled_notifications: 1, attempt: 1, events, ...(error ? { error } : {}),
  });

  it('keeps the head of a long answer and of long tool arguments, with their full length', () => {
    const r = boundedRecord(record([ev({ type: 'agent_response', text: 'a'.repeat(10_000), partial: false }), ev({ type: 'tool_call', id: 'c1', name: 't', arguments: { body: 'b'.repeat(10_000) } })], 'e'.repeat(5_000)));
    const [answer, call] = r.events;
    expect(answer).toMatchObject({ type: 'agent_response', text: `${'a'.repeat(RECORD_FIELD_CHARS)}…`, full_length: 10_000 });
    expect(call).toMatchObject({ type: 'tool_call', arguments: {}, arguments_excerpt: `{"body":"${'b'.repeat(RECORD_FIELD_CHARS - 9)}…`, full_length: 10_011 });
    expect(r.error).toHaveLength(RECORD_FIELD_CHARS + 1);
  });

  it('redacts a long text before cutting it, so a secret at the cut is hidden whole', () => {
    const secret = 'sk-SECRET-0123456789';
    const text = `${'a'.repeat(RECORD_FIELD_CHARS - 10)}${secret}`;
    const r = boundedRecord(record([ev({ type: 'error', message: text })]), (t) => t.replaceAll(secret, '[REDACTED]'));
    expect(JSON.stringify(r)).not.toContain('sk-SECRET');
  });

  it('keeps the first and last events within MAX_RECORD_CHARS and counts the rest', () => {
    const events = Array.from({ length: 150 }, (_, i) => ev({ type: 'loop_warning', kind: 'format', message: `${i}:${'w'.repeat(1_900)}` }));
    const r = boundedRecord(record(events));
    expect(JSON.stringify(r).length).toBeLessThanOrEqual(MAX_RECORD_CHARS);
    expect(r.events_dropped).toBe(150 - r.events.length);
    expect(r.events[0]).toBe(events[0]);
    expect(r.events.at(-1)).toBe(events.at(-1));
  });

  it('is the record itself when it is small', () => {
    const events = [ev({ type: 'agent_response', text: 'hi', partial: false })];
    expect(boundedRecord(record(events))).toEqual(record(events));
  });
});
