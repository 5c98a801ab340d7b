// The distiller's pure decisions, table-driven: what it asks (memory/distill-prompt.ts), how it reads the answer
// (memory/distill-answer.ts) and how much reply the activation's token budget leaves (memory/distill-budget.ts).
import { describe, expect, it } from 'vitest';
import { readDistillAnswer } from '../memory/distill-answer.ts';
import { distillAllowance, DISTILL_REPLY_TOKENS } from '../memory/distill-budget.ts';
import { DISTILL_OPENING, distillPrompt, MAX_FACT_CHARS } from '../memory/distill-prompt.ts';
import type { MemoryEntry } from '../memory/memory-store.ts';

const ids = new Map([
  ['F1', 'id-pelican'],
  ['F2', 'id-lunch'],
]);

describe('reading the distiller answer', () => {
  it.each([
    { name: 'add', text: '{"operations":[{"op":"add","text":"The codeword is PELICAN-42."}]}', want: { add: ['The codeword is PELICAN-42.'], retire: [] } },
    { name: 'update retires the old fact and adds the new one', text: '{"operations":[{"op":"update","id":"F1","text":"The codeword is HERON-7."}]}', want: { add: ['The codeword is HERON-7.'], retire: ['id-pelican'] } },
    { name: 'delete', text: '{"operations":[{"op":"delete","id":"F2"}]}', want: { add: [], retire: ['id-lunch'] } },
    { name: 'nothing to keep', text: '{"operations":[]}', want: { add: [], retire: [] } },
    { name: 'inside a json fence', text: 'Here:\n```json\n{"operations":[{"op":"delete","id":"F1"}]}\n```', want: { add: [], retire: ['id-pelican'] } },
    { name: 'a long fact is cut', text: JSON.stringify({ operations: [{ op: 'add', text: 'x'.repeat(500) }] }), want: { add: [`${'x'.repeat(MAX_FACT_CHARS - 1)}…`], retire: [] } },
  ])('$name', ({ text, want }) => {
    expect(readDistillAnswer(text, ids)).toEqual({ ok: true, changes: want });
  });

  it.each([
    { name: 'empty', text: '', why: 'the answer was empty' },
    { name: 'prose', text: 'The codeword is PELICAN-42.', why: 'the answer is not JSON' },
    { name: 'another shape', text: '{"facts":["x"]}', why: 'not the shape asked for' },
    { name: 'an unknown operation', text: '{"operations":[{"op":"merge","id":"F1"}]}', why: 'not the shape asked for' },
    { name: 'a fact it was not shown', text: '{"operations":[{"op":"delete","id":"F9"}]}', why: 'names F9, a fact it was not shown' },
    { name: 'a real entry id instead of a short one', text: '{"operations":[{"op":"delete","id":"id-pelican"}]}', why: 'a fact it was not shown' },
    { name: 'one fact changed twice', text: '{"operations":[{"op":"delete","id":"F1"},{"op":"update","id":"F1","text":"y"}]}', why: 'changes F1 twice' },
    { name: 'an empty fact', text: '{"operations":[{"op":"add","text":"  "}]}', why: 'not the shape asked for' },
  ])('refuses $name', ({ text, why }) => {
    const verdict = readDistillAnswer(text, ids);
    expect(verdict.ok).toBe(false);
    expect(verdict.ok ? '' : verdict.why).toContain(why);
  });
});

describe('the token budget of a distillation', () => {
  it.each([
    { name: 'plenty left: the usual reply', budget: 100_000, spent: 2_000, prompt: 500, brainMax: 4096, want: { ok: true, maxTokens: DISTILL_REPLY_TOKENS } },
    { name: "brain.max_tokens is lower", budget: 100_000, spent: 0, prompt: 500, brainMax: 300, want: { ok: true, maxTokens: 300 } },
    { name: 'little left: the reply is capped to it', budget: 3_000, spent: 2_000, prompt: 600, brainMax: 4096, want: { ok: true, maxTokens: 400 } },
    { name: 'too little left', budget: 3_000, spent: 2_700, prompt: 200, brainMax: 4096, want: { ok: false } },
    { name: 'overspent already', budget: 1_000, spent: 1_200, prompt: 100, brainMax: 4096, want: { ok: false } },
  ])('$name', ({ budget, spent, prompt, brainMax, want }) => {
    expect(distillAllowance(budget, spent, prompt, brainMax)).toMatchObject(want);
  });
});

describe('the distiller request', () => {
  const entry = (id: string, text: string): MemoryEntry => ({ id, agent: 'keeper', key: id, kind: 'fact', text, createdAt: Date.UTC(2026, 10, 1), recalls: 0, bytes: 1 });
  it('shows the facts under short ids of this request, then the exchange, dated', () => {
    const p = distillPrompt('keeper', [entry('c1', 'alice mentioned me: "the codeword is HERON-7 now".')], [entry('id-pelican', 'The codeword is PELICAN-42.')]);
    expect(String(p.messages[0]!.content).startsWith(`${DISTILL_OPENING} "keeper"`)).toBe(true);
    expect(p.messages[1]!.content).toBe('Facts now:\nF1: The codeword is PELICAN-42.\n\nThe exchange:\n[2026-11-01] alice mentioned me: "the codeword is HERON-7 now".');
    expect([...p.ids]).toEqual([['F1', 'id-pelican']]);
    expect(distillPrompt('keeper', [entry('c1', 'hi')], []).messages[1]!.content).toContain('Facts now:\n(none)');
  });
});
