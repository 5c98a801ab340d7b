// Issue 16's fuzz step for model answers: a model is untrusted input too. Thousands of seeded malformed answers go
// through the real agent loop, first as a scripted model (truncated JSON arguments, invented or hostile tool names,
// huge strings, wrong argument types, nested garbage, duplicate or empty ids, odd finish reasons, text-mode
// markup), then over real HTTP through the OpenAI adapter (bodies and SSE streams with nulls, wrong types, missing
// fields, truncated JSON). Every run must resolve with a termination (never throw or hang) and every tool call the
// loop accepted must get exactly one result before the next model call.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { noActionTool, taskCompleteTool } from '../../agent-loop/builtin-tools.ts';
import { runLoop, type LoopResult } from '../../agent-loop/loop.ts';
import type { ChatMessage } from '../../agent-loop/messages.ts';
import type { TerminationReason } from '../../agent-loop/termination.ts';
import { ToolRegistry } from '../../agent-loop/tools.ts';
import { costOf, DEFAULT_PRICES } from '../../agent-loop/usage-ledger.ts';
import { OpenAIChatModel } from '../../executors/llm/openai-model.ts';
import { readBody } from '../fakes/read-body.ts';
import { anthropicPairingProblems, events, FnModel, makeTool, pairingProblems, type Turn } from '../support/loop-kit.ts';
import { Prng } from '../support/prng.ts';
import { PROCESS_TEST_MS } from '../support/ceilings.ts';

const TERMINATIONS: readonly TerminationReason[] = ['final', 'stop_tool', 'no_action', 'max_steps', 'budget', 'deadline', 'aborted', 'loop_detected', 'circuit_open', 'error'];
const FAST_RETRY = { attemptsPerModel: 2, initialDelayMs: 1, maxDelayMs: 2, maxRetryAfterMs: 5 };
const RUN_BOUND_MS = 20_000;
const INTERNAL_ERROR = /Cannot read properties|is not a function|is not iterable|Cannot convert|Maximum call stack|Invalid array length|\bundefined\b/;
/** FUZZ_SEED=<seed>: replay one run of the HTTP part and print what it sent and got. */
const ONLY = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : undefined;

function tools(): ToolRegistry {
  const q = { type: 'object', properties: { q: { type: 'string' }, n: { type: 'integer' } }, required: ['q'], additionalProperties: false };
  return new ToolRegistry([makeTool('search', { parameters: q }), makeTool('write', { readOnly: false, parameters: q }), makeTool('echo'), taskCompleteTool, noActionTool], []);
}

/** Garbage of every JSON type, nested up to `depth`. */
function garbage(prng: Prng, depth = 4): unknown {
  switch (prng.int(depth > 0 ? 10 : 7)) {
    case 0: return null;
    case 1: return prng.int(3) === 0 ? -1e308 : prng.next() * 1e6;
    case 2: return prng.chance(0.5);
    case 3: return '';
    case 4: return prng.pick(['\u0000', '\ud800', '🦀'.repeat(50), '<tool_call>', '{"', '\\', 'NaN', '__proto__']);
    case 5: return 'x'.repeat(prng.chance(0.05) ? 100_000 : 20);
    case 6: return [];
    case 7: return Array.from({ length: 1 + prng.int(4) }, () => garbage(prng, depth - 1));
    case 8: return Object.fromEntries(Array.from({ length: 1 + prng.int(4) }, (_, i) => [prng.pick(['q', 'n', '__proto__', 'constructor', `k${i}`, '']), garbage(prng, depth - 1)]));
    default: return { q: garbage(prng, depth - 1) };
  }
}

const NAMES = ['search', 'write', 'echo', 'task_complete', 'no_action', '', ' ', 'SEARCH', 'search ', 'x'.repeat(10_000), '__proto__', 'constructor', 'toString', 'hasOwnProperty', 'functions.search', 'mcp__hub__post', '🦀', 'search\u0000', '../../etc/passwd', 'search<|im_end|>'];

function malformedArguments(prng: Prng): string | Record<string, unknown> {
  const valid = JSON.stringify({ q: 'hello', n: 2 });
  switch (prng.int(15)) {
    case 0: return valid.slice(0, prng.int(valid.length)); // truncated
    case 1: return prng.pick(['null', '[]', '42', '"str"', 'true', '', ' ', 'undefined', 'NaN']);
    case 2: return '{"q": "broken';
    case 3: return '{"q":"a"}{"q":"b"}';
    case 4: return '```json\n{"q": "fenced"}\n```';
    case 5: return '['.repeat(5_000) + ']'.repeat(prng.int(2) * 5_000);
    case 6: return `{"q": "${'y'.repeat(prng.chance(0.2) ? 200_000 : 2_000)}"}`;
    case 7: return { q: null, n: 'two' };
    case 8: return { q: 5, extra: true };
    case 9: return garbage(prng) as Record<string, unknown>;
    case 10: return { q: garbage(prng, 6) };
    case 11: return "{'q': 'single quotes', n: 3,}";
    case 12: return '{"q": "\\ud800 lone surrogate"}';
    case 13: return { result: 'done' }; // what task_complete needs
    default: return { q: 'ok' };
  }
}

function malformedTurn(prng: Prng, previousIds: string[]): Turn {
  const kind = prng.int(10);
  const finishReason = prng.chance(0.4) ? prng.pick(['stop', 'tool_calls', 'length', 'content_filter', '', 'function_call', 'null', 'x'.repeat(1_000), 'error']) : undefined;
  const content = prng.chance(0.5)
    ? prng.pick<string | null>([null, '', 'NO_ACTION', 'plain answer', '<tool_call>{"name": "search", "arguments": {"q": ', '{"tool": "search", "args": {}}', 'z'.repeat(prng.chance(0.03) ? 1_000_000 : 10), '```tool_call\n{"name":"write"}\n```', '\u0000\ud800'])
    : undefined;
  if (kind === 0) return { content: content ?? null, finishReason };
  const n = prng.chance(0.05) ? 60 + prng.int(60) : 1 + prng.int(5);
  const calls: NonNullable<Turn['calls']> = Array.from({ length: n }, (_, i) => {
    const idKind = prng.int(10);
    const id = idKind === 0 ? '' : idKind === 1 ? 'dup' : idKind === 2 && previousIds.length ? prng.pick(previousIds) : idKind === 3 ? 'i'.repeat(5_000) : `call_${prng.int(1e9)}_${i}`;
    return { id, name: prng.pick(NAMES), arguments: malformedArguments(prng) };
  });
  for (const c of calls) if (c.id) previousIds.push(c.id);
  return { content, calls, finishReason, usage: prng.chance(0.1) ? { input: prng.int(200_000), output: prng.int(50_000) } : undefined };
}

interface RunReport {
  crash?: string;
  termination?: string;
  answers: number;
  problems: string[];
}

/** Runs the loop, turning a throw or a hang into a report instead of a test failure in the middle of a batch. */
async function guarded(seed: number, run: () => Promise<LoopResult>): Promise<{ result?: LoopResult; crash?: string }> {
  let timer: NodeJS.Timeout | undefined;
  try {
    const hang = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`seed ${seed}: no termination within ${RUN_BOUND_MS} ms`)), RUN_BOUND_MS)));
    const result = await Promise.race([run(), hang]);
    if (!TERMINATIONS.includes(result.termination)) return { crash: `seed ${seed}: unknown termination ${String(result.termination)}` };
    if (result.termination === 'error' && !result.error) return { crash: `seed ${seed}: termination error without an error` };
    // An error ending is fine for a broken answer, not for a bug of ours that the loop happened to catch.
    if (result.error && INTERNAL_ERROR.test(result.error.message)) return { crash: `seed ${seed}: internal error as a termination: ${result.error.message.slice(0, 200)}` };
    return { result };
  } catch (err) {
    return { crash: `seed ${seed}: ${err instanceof Error ? `${err.name}: ${err.message}\n${err.stack?.split('\n').slice(1, 4).join('\n')}` : String(err)}` };
  } finally {
    clearTimeout(timer);
  }
}

function checkPairing(seed: number, requests: ReadonlyArray<readonly ChatMessage[]>, result: LoopResult | undefined): string[] {
  const problems: string[] = [];
  for (const [i, msgs] of requests.entries()) {
    for (const p of [...pairingProblems(msgs), ...anthropicPairingProblems(msgs)]) problems.push(`seed ${seed} request ${i + 1}: ${p}`);
  }
  // The calls of the last turn are seen by no further request: their results are counted in the loop's result.
  const counts = new Map<string, number>();
  for (const r of result?.toolResults ?? []) counts.set(r.call.id, (counts.get(r.call.id) ?? 0) + 1);
  for (const [id, n] of counts) if (n > 1) problems.push(`seed ${seed}: call ${id.slice(0, 40)} has ${n} results`);
  return problems;
}

function summarise(reports: RunReport[]): { crashes: string[]; problems: string[]; answers: number; terminations: Map<string, number> } {
  const terminations = new Map<string, number>();
  for (const r of reports) if (r.termination) terminations.set(r.termination, (terminations.get(r.termination) ?? 0) + 1);
  return { crashes: reports.flatMap((r) => (r.crash ? [r.crash] : [])), problems: reports.flatMap((r) => r.problems), answers: reports.reduce((s, r) => s + r.answers, 0), terminations };
}

describe('malformed model answers through the real loop', { timeout: PROCESS_TEST_MS }, () => {
  it('a model name from the server never picks a price off the object prototype', () => {
    for (const name of ['__proto__', 'constructor', 'toString', 'hasOwnProperty']) expect(costOf(name, { inputTokens: 1_000_000, outputTokens: 0, cachedTokens: 0 }, DEFAULT_PRICES)).toBe(DEFAULT_PRICES.default.input);
  });

  it('scripted model: 0 crashes, every accepted call answered exactly once', async () => {
    const reports: RunReport[] = [];
    for (let batch = 0; batch < 20; batch++) {
      reports.push(
        ...(await Promise.all(
          Array.from({ length: 35 }, async (_, i): Promise<RunReport> => {
            const seed = 160_000 + batch * 35 + i;
            const prng = new Prng(seed);
            const ids: string[] = [];
            const model = new FnModel(() => malformedTurn(prng, ids));
            const { result, crash } = await guarded(seed, () =>
              runLoop({
                model,
                modelName: 'fuzz',
                system: 's',
                task: 't',
                maxSteps: 1 + prng.int(6),
                maxRunTokens: prng.chance(0.2) ? 2_000 : 2_000_000,
                maxTokens: 500,
                signal: new AbortController().signal,
                events: events(`act_${seed}`),
                tools: tools(),
                toolMode: prng.pick(['native', 'text', 'native'] as const),
                retry: FAST_RETRY,
              }),
            );
            return { crash, termination: result?.termination, answers: model.requests.length, problems: [...checkPairing(seed, model.requests.map((r) => r.messages), result), ...usageProblems(seed, result)] };
          }),
        )),
      );
    }
    const { crashes, problems, answers, terminations } = summarise(reports);
    console.log(`scripted model: ${reports.length} runs, ${answers} answers, terminations ${JSON.stringify(Object.fromEntries(terminations))}`);
    expect(crashes.slice(0, 5)).toEqual([]);
    expect(problems.slice(0, 12)).toEqual([]);
    expect(answers).toBeGreaterThanOrEqual(2_000);
    // The garbage really reached different ends of the loop.
    expect([...terminations.keys()]).toEqual(expect.arrayContaining(['final', 'max_steps', 'stop_tool']));
  }, 300_000);

  describe('over HTTP, through the OpenAI adapter', () => {
    let server: Server;
    let base = '';
    // Each run has its own path, so concurrent runs draw from their own seeded answers.
    const answerers = new Map<number, { next: (stream: boolean) => { status: number; type: string; body: string }; bodies: unknown[] }>();
    beforeAll(async () => {
      server = createServer((req, res) => {
        void readBody(req).then((raw) => {
          const run = answerers.get(Number(/^\/run\/(\d+)\//.exec(req.url ?? '')?.[1]));
          if (!run) return void res.writeHead(404).end();
          let body: { stream?: boolean } = {};
          try {
            body = JSON.parse(raw) as { stream?: boolean };
          } catch {
            // recorded as is: the pairing check then fails loudly
          }
          run.bodies.push(body);
          const a = run.next(body.stream === true);
          res.writeHead(a.status, { 'content-type': a.type });
          res.end(a.body);
        });
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    });
    afterAll(async () => {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    });

    it('malformed bodies and streams: 0 crashes, every accepted call answered exactly once', async () => {
      const reports: RunReport[] = [];
      for (let batch = 0; batch < (ONLY ? 1 : 50); batch++) {
        reports.push(
          ...(await Promise.all(
            Array.from({ length: ONLY ? 1 : 40 }, async (_, i): Promise<RunReport> => {
              const seed = ONLY ?? 260_000 + batch * 40 + i;
              const prng = new Prng(seed);
              const bodies: unknown[] = [];
              let answers = 0;
              answerers.set(seed, { bodies, next: (stream) => (answers++, wireAnswer(prng, stream)) });
              const model = new OpenAIChatModel({ baseURL: `${base}/run/${seed}/v1`, apiKey: 'fuzz', stream: prng.chance(0.5), maxRetries: 0, timeoutMs: 5_000 });
              const { result, crash } = await guarded(seed, () =>
                runLoop({ model, modelName: 'fuzz', system: 's', task: 't', maxSteps: 1 + prng.int(5), maxTokens: 500, signal: new AbortController().signal, events: events(`act_${seed}`), tools: tools(), retry: FAST_RETRY }),
              );
              answerers.delete(seed);
              if (seed === ONLY) console.log(JSON.stringify({ result, crash, bodies }, null, 1).slice(0, 20_000));
              const problems = [...checkPairing(seed, bodies.map(wireMessages), result), ...bodies.flatMap((b) => wireProblems(seed, b)), ...usageProblems(seed, result)];
              return { crash, termination: result?.termination, answers, problems };
            }),
          )),
        );
      }
      const { crashes, problems, answers, terminations } = summarise(reports);
      console.log(`over HTTP: ${reports.length} runs, ${answers} answers, terminations ${JSON.stringify(Object.fromEntries(terminations))}`);
      expect(crashes.slice(0, 5)).toEqual([]);
      expect(problems.slice(0, 12)).toEqual([]);
      expect(answers).toBeGreaterThanOrEqual(2_000);
      expect([...terminations.keys()]).toEqual(expect.arrayContaining(['final', 'error']));
    }, 300_000);
  });
});

/** What a provider would reject (HTTP 400) in a request: fields of the wrong type, ids that are not strings. */
function wireProblems(seed: number, body: unknown): string[] {
  const problems: string[] = [];
  const messages = (body as { messages?: unknown }).messages;
  if (!Array.isArray(messages)) return [`seed ${seed}: a request without messages`];
  for (const m of messages as Array<Record<string, unknown>>) {
    const where = `seed ${seed}: ${String(m.role)} message`;
    if (!(typeof m.content === 'string' || (m.role === 'assistant' && m.content === null))) problems.push(`${where} with content ${JSON.stringify(m.content)?.slice(0, 60)}`);
    if (m.role === 'tool' && (typeof m.tool_call_id !== 'string' || !m.tool_call_id)) problems.push(`${where} with tool_call_id ${JSON.stringify(m.tool_call_id)?.slice(0, 60)}`);
    for (const c of (m.tool_calls ?? []) as Array<{ id?: unknown; function?: { name?: unknown; arguments?: unknown } }>) {
      if (typeof c.id !== 'string' || !c.id) problems.push(`${where}: tool call id ${JSON.stringify(c.id)?.slice(0, 60)}`);
      if (typeof c.function?.name !== 'string' || !c.function.name) problems.push(`${where}: tool call name ${JSON.stringify(c.function?.name)?.slice(0, 60)}`);
      if (typeof c.function?.arguments !== 'string') problems.push(`${where}: tool call arguments ${JSON.stringify(c.function?.arguments)?.slice(0, 60)}`);
    }
  }
  return problems;
}

/** Usage and cost the budget limits can work with: finite, non-negative numbers. */
function usageProblems(seed: number, result: LoopResult | undefined): string[] {
  if (!result) return [];
  const { inputTokens, outputTokens, cachedTokens } = result.usage;
  const numbers = { inputTokens, outputTokens, cachedTokens, costUsd: result.costUsd };
  return Object.entries(numbers).flatMap(([k, v]) => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? [] : [`seed ${seed}: usage ${k} is ${JSON.stringify(v)?.slice(0, 60)}`]));
}

/** The pairing-relevant part of a request as the provider receives it. */
function wireMessages(body: unknown): ChatMessage[] {
  const messages = (body as { messages?: unknown }).messages;
  if (!Array.isArray(messages)) return [{ role: 'user', content: 'request without messages' }, { role: 'tool', toolCallId: '<none>', content: '' }];
  return messages.map((m: { role?: string; tool_calls?: Array<{ id: string; function: { name: string } }>; tool_call_id?: string; content?: string }): ChatMessage => {
    if (m.role === 'assistant') return { role: 'assistant', content: m.content ?? null, toolCalls: (m.tool_calls ?? []).map((c) => ({ id: c.id, name: c.function.name, arguments: {} })) };
    if (m.role === 'tool') return { role: 'tool', toolCallId: m.tool_call_id ?? '', content: m.content ?? '' };
    return { role: m.role === 'system' ? 'system' : 'user', content: String(m.content) };
  });
}

/** A valid completion, then broken at a few random places; or a body that is not a completion at all. */
function wireAnswer(prng: Prng, stream: boolean): { status: number; type: string; body: string } {
  const json = (body: unknown): { status: number; type: string; body: string } => ({ status: 200, type: 'application/json', body: JSON.stringify(body) });
  if (prng.chance(0.08)) {
    return { status: prng.pick([200, 200, 500, 400, 429]), type: prng.pick(['application/json', 'text/html', 'text/event-stream']), body: prng.pick(['', '{', 'null', '[]', '"str"', '<html>oops</html>', '['.repeat(10_000), 'data: {\n\n', JSON.stringify({ error: garbage(prng) })]) };
  }
  const calls = prng.chance(0.6)
    ? Array.from({ length: 1 + prng.int(4) }, (_, i) => {
        const args = malformedArguments(prng);
        return { id: prng.chance(0.1) ? garbage(prng, 1) : `call_${prng.int(1e9)}_${i}`, type: prng.chance(0.05) ? garbage(prng, 1) : 'function', function: { name: prng.chance(0.1) ? garbage(prng, 1) : prng.pick(NAMES), arguments: typeof args === 'string' ? args : prng.chance(0.1) ? args : JSON.stringify(args) } };
      })
    : undefined;
  const message: Record<string, unknown> = { role: 'assistant', content: calls ? null : 'an answer', ...(calls ? { tool_calls: calls } : {}) };
  const choice: Record<string, unknown> = { index: 0, message, finish_reason: calls ? 'tool_calls' : 'stop' };
  const completion: Record<string, unknown> = { id: 'c', object: 'chat.completion', created: 0, model: 'fuzz', choices: [choice], usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } };
  // Break 1–3 places: the field is replaced by garbage of any type (null, wrong type, nested junk, huge string).
  const targets: Array<[Record<string, unknown>, string]> = [[completion, 'choices'], [completion, 'usage'], [completion, 'model'], [choice, 'message'], [choice, 'finish_reason'], [message, 'content'], [message, 'tool_calls'], [message, 'role']];
  for (const c of calls ?? []) targets.push([c, 'function'], [c.function, 'arguments'], [c.function, 'name'], [c, 'id']);
  for (let k = 1 + prng.int(3); k > 0; k--) {
    const [obj, key] = prng.pick(targets);
    if (prng.chance(0.2)) delete obj[key];
    else obj[key] = garbage(prng, 3);
  }
  if (!stream) return json(completion);
  return { status: 200, type: 'text/event-stream', body: sseOf(prng, completion) };
}

/** The completion as OpenAI streams it (role, content, one delta per call fragment, finish, usage, [DONE]), broken. */
function sseOf(prng: Prng, completion: Record<string, unknown>): string {
  const choice = (Array.isArray(completion.choices) ? completion.choices[0] : undefined) as Record<string, unknown> | undefined;
  const message = (choice?.message ?? {}) as Record<string, unknown>;
  const chunks: unknown[] = [];
  const chunk = (delta: unknown, finish: unknown = null): void => void chunks.push({ id: 'c', object: 'chat.completion.chunk', created: 0, model: completion.model, choices: [{ index: 0, delta, finish_reason: finish }] });
  chunk({ role: 'assistant', content: typeof message.content === 'string' ? '' : message.content });
  if (typeof message.content === 'string') for (let i = 0; i < message.content.length; i += 16) chunk({ content: message.content.slice(i, i + 16) });
  const calls = Array.isArray(message.tool_calls) ? (message.tool_calls as Array<Record<string, unknown>>) : [];
  calls.forEach((c, index) => {
    const fn = (c?.function ?? {}) as Record<string, unknown>;
    chunk({ tool_calls: [{ index: prng.chance(0.05) ? garbage(prng, 1) : index, id: c?.id, type: c?.type, function: { name: fn.name, arguments: '' } }] });
    const args = typeof fn.arguments === 'string' ? fn.arguments : JSON.stringify(fn.arguments ?? '');
    for (let i = 0; i < args.length; i += 64) chunk({ tool_calls: [{ index, function: { arguments: args.slice(i, i + 64) } }] });
  });
  chunk({}, choice?.finish_reason ?? 'stop');
  chunks.push({ id: 'c', object: 'chat.completion.chunk', created: 0, model: 'fuzz', choices: [], usage: completion.usage });
  const events = chunks.map((c) => `data: ${JSON.stringify(c)}\n\n`);
  // Stream-level damage: a chunk that is not JSON, a chunk of garbage, an error event, a missing [DONE], a cut.
  const damage = prng.int(6);
  if (damage === 0) events.splice(prng.int(events.length), 0, 'data: {"choices": [\n\n');
  if (damage === 1) events.splice(prng.int(events.length), 0, `data: ${JSON.stringify(garbage(prng))}\n\n`);
  if (damage === 2) events.splice(prng.int(events.length), 0, `data: ${JSON.stringify({ error: { message: 'overloaded', type: 'server_error' } })}\n\n`);
  if (damage === 3) events.length = prng.int(events.length);
  if (damage !== 4) events.push('data: [DONE]\n\n');
  return events.join('');
}
