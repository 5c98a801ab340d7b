// Helpers for the agent-loop tests: a model driven by a function that records every request, simple tools,
// and the pairing check of docs/agent-loop.md R5 over OpenAI-style and Anthropic-style payloads.
import { EventLog } from '../../agent-loop/events.ts';
import { FRESH_GUARD, guardAfterResults, guardBeforeCalls, type AfterVerdict, type GuardResult, type GuardState, type GuardVerdict } from '../../agent-loop/loop-guard.ts';
import type { ChatMessage, ToolCall } from '../../agent-loop/messages.ts';
import type { ChatModel, ModelRequest, ModelResponse, ToolDefinition } from '../../agent-loop/model.ts';
import type { Tool, ToolContext, ToolOutcome } from '../../agent-loop/tools.ts';

export type RecordedModelRequest = Omit<ModelRequest, 'signal' | 'onDelta'>;

export interface Turn {
  content?: string | null;
  calls?: Array<{ id?: string; name: string; arguments?: Record<string, unknown> | string }>;
  finishReason?: string;
  usage?: { input: number; output: number };
  delayMs?: number;
}

/** A ChatModel answering from `script(request, n)`; records a deep copy of every request it receives. */
export class FnModel implements ChatModel {
  readonly requests: RecordedModelRequest[] = [];
  readonly #script: (req: ModelRequest, n: number) => Turn | Promise<Turn>;
  #ids = 0;

  constructor(script: (req: ModelRequest, n: number) => Turn | Promise<Turn>) {
    this.#script = script;
  }

  async complete(req: ModelRequest): Promise<ModelResponse> {
    const { signal, onDelta: _onDelta, ...rest } = req;
    this.requests.push(structuredClone<RecordedModelRequest>(rest));
    const turn = await this.#script(req, this.requests.length);
    if (turn.delayMs) await sleep(turn.delayMs, signal);
    const toolCalls: ToolCall[] = (turn.calls ?? []).map((c) => ({
      id: c.id ?? `call_${++this.#ids}`,
      name: c.name,
      arguments: typeof c.arguments === 'string' ? {} : (c.arguments ?? {}),
      ...(typeof c.arguments === 'string' ? { rawArguments: c.arguments } : {}),
    }));
    return {
      content: turn.content ?? null,
      toolCalls,
      finishReason: turn.finishReason ?? (toolCalls.length ? 'tool_calls' : 'stop'),
      usage: { inputTokens: turn.usage?.input ?? 10, outputTokens: turn.usage?.output ?? 5, cachedTokens: 0 },
      model: req.model,
    };
  }
}

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new Error('aborted'));
    const t = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => (clearTimeout(t), reject(new Error('aborted'))), { once: true });
  });
}

export function events(id = 'act_test'): EventLog {
  return new EventLog(id, { limit: 100_000 });
}

const schema = (props: Record<string, unknown> = {}, required: string[] = []): Record<string, unknown> => ({ type: 'object', properties: props, required, additionalProperties: false });

export function makeTool(name: string, opts: { readOnly?: boolean; grant?: string; run?: (args: Record<string, unknown>, ctx: ToolContext) => Promise<ToolOutcome> | ToolOutcome; parameters?: Record<string, unknown>; timeoutMs?: number; postsToHub?: boolean } = {}): Tool & { calls: Array<Record<string, unknown>> } {
  const calls: Array<Record<string, unknown>> = [];
  const definition: ToolDefinition = { name, description: `the ${name} tool`, parameters: opts.parameters ?? schema({ q: { type: 'string' } }) };
  return {
    calls,
    definition,
    readOnly: opts.readOnly ?? true,
    grant: opts.grant,
    timeoutMs: opts.timeoutMs,
    postsToHub: opts.postsToHub,
    execute: async (args, ctx) => {
      calls.push(args);
      return opts.run ? await opts.run(args, ctx) : { status: 'ok', content: `${name} result for ${JSON.stringify(args)}` };
    },
  };
}

/** The guards' pure functions with their state kept between calls, as the loop keeps it between steps. */
export class LoopGuard {
  state: GuardState = FRESH_GUARD;

  beforeCalls(step: number, calls: readonly ToolCall[]): GuardVerdict {
    const { guard, verdict } = guardBeforeCalls(this.state, step, calls);
    this.state = guard;
    return verdict;
  }

  afterResults(results: readonly GuardResult[]): AfterVerdict {
    const { guard, verdict } = guardAfterResults(this.state, results);
    this.state = guard;
    return verdict;
  }
}

/** Problems with tool-call pairing in one request's messages (empty when every call has exactly one result). */
export function pairingProblems(messages: readonly ChatMessage[]): string[] {
  const problems: string[] = [];
  const open = new Map<string, number>();
  const answered = new Map<string, number>();
  for (const m of messages) {
    if (m.role === 'assistant') {
      for (const c of m.toolCalls ?? []) {
        if (open.has(c.id) || answered.has(c.id)) problems.push(`call ${c.id} issued twice`);
        open.set(c.id, 0);
      }
    } else if (m.role === 'tool') {
      if (!open.has(m.toolCallId)) problems.push(`result for unknown call ${m.toolCallId}`);
      answered.set(m.toolCallId, (answered.get(m.toolCallId) ?? 0) + 1);
      open.delete(m.toolCallId);
    } else if (open.size) {
      // OpenAI requires the results right after their assistant message; a user/system message in between is a 400.
      problems.push(`results missing before a ${m.role} message: ${[...open.keys()].join(',')}`);
      open.clear();
    }
  }
  for (const [id, n] of answered) if (n > 1) problems.push(`call ${id} answered ${n} times`);
  if (open.size) problems.push(`unanswered calls: ${[...open.keys()].join(',')}`);
  return problems;
}

/** The same messages as Anthropic's Messages API pairs them: tool_use blocks and tool_result blocks. */
export function anthropicPairingProblems(messages: readonly ChatMessage[]): string[] {
  const problems: string[] = [];
  let pending: Set<string> | undefined;
  for (const m of messages) {
    if (m.role === 'tool') {
      if (!pending?.has(m.toolCallId)) problems.push(`tool_result ${m.toolCallId} without a tool_use in the previous assistant turn`);
      pending?.delete(m.toolCallId);
      continue;
    }
    if (pending?.size) problems.push(`tool_use without tool_result: ${[...pending].join(',')}`);
    pending = m.role === 'assistant' ? new Set((m.toolCalls ?? []).map((c) => c.id)) : undefined;
  }
  if (pending?.size) problems.push(`tool_use without tool_result: ${[...pending].join(',')}`);
  return problems;
}
