// OpenTelemetry (docs/agent-loop.md R13): spans nest run → step → model attempt or tool call; the W3C traceparent
// reaches delegates and HTTP MCP servers; payloads are captured only when asked, through redaction. Spans are
// collected by the real SDK (in memory here; over OTLP/HTTP in the daemon test at the end).
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { trace } from '@opentelemetry/api';
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider, type ReadableSpan } from '@opentelemetry/sdk-trace';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { EventLog } from '../agent-loop/events.ts';
import { runLoop } from '../agent-loop/loop.ts';
import { connectMcpServers } from '../agent-loop/mcp-tools.ts';
import { ToolRegistry } from '../agent-loop/tools.ts';
import { contextOf, traceparentOf } from '../agent-loop/tracing.ts';
import { LlmExecutor } from '../executors/llm/llm-executor.ts';
import { AgentConfigSchema, type ScriptedReply } from '../store/agent-config.ts';
import type { AgentDefinition } from '../store/definition.ts';
import { startFakeMcpHttp, type FakeMcpHttp } from './fakes/mcp-server.ts';
import { readBody } from './fakes/read-body.ts';
import { makeAgentsDir, startHarness, type Harness } from './support/daemon-harness.ts';
import { waitFor } from './support/hub-api.ts';
import { events, FnModel, makeTool } from './support/loop-kit.ts';

const exporter = new InMemorySpanExporter();
const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] });
let mcp: FakeMcpHttp;
beforeAll(async () => {
  trace.setGlobalTracerProvider(provider);
  mcp = await startFakeMcpHttp();
});
afterAll(async () => {
  await mcp.close();
  trace.disable();
});
afterEach(() => exporter.reset());

const named = (spans: readonly ReadableSpan[], name: string) => spans.filter((s) => s.name === name);
const parentOf = (s: ReadableSpan) => s.parentSpanContext?.spanId;
const CANARY = `canary-${Math.random().toString(36).slice(2)}`;

describe('spans of a run', () => {
  it('nest invoke_agent → step → chat / execute_tool, every tool span under its own step', async () => {
    const model = new FnModel((_r, n) =>
      n === 1 ? { calls: [{ name: 'lookup', arguments: { q: 'a' } }, { name: 'lookup', arguments: { q: 'b' } }] } : n === 2 ? { calls: [{ name: 'lookup', arguments: { q: 'c' } }] } : { content: 'done' },
    );
    const r = await runLoop({ model, modelName: 'm', system: 's', task: `find ${CANARY}`, maxSteps: 5, signal: new AbortController().signal, events: events(), tools: new ToolRegistry([makeTool('lookup', { readOnly: true })], []), agent: 'tester' });
    expect(r.termination).toBe('final');
    const spans = exporter.getFinishedSpans();
    const [root] = named(spans, 'invoke_agent tester');
    expect(root).toBeDefined();
    expect(parentOf(root!)).toBeUndefined();
    expect(root!.attributes).toMatchObject({ 'gen_ai.agent.name': 'tester', 'warren.termination': 'final', 'warren.steps': 3 });
    const steps = named(spans, 'warren.step');
    expect(steps.map((s) => s.attributes['warren.step'])).toEqual([1, 2, 3]);
    for (const s of steps) expect(parentOf(s)).toBe(root!.spanContext().spanId);
    const stepById = new Map(steps.map((s) => [s.spanContext().spanId, s]));
    const chats = named(spans, 'chat m');
    expect(chats).toHaveLength(3);
    for (const c of chats) expect(stepById.has(parentOf(c)!)).toBe(true);
    const tools = named(spans, 'execute_tool lookup');
    expect(tools).toHaveLength(3);
    for (const t of tools) expect(stepById.get(parentOf(t)!)?.attributes['warren.step']).toBe(t.attributes['warren.step']);
    expect(tools.map((t) => t.attributes['warren.step'])).toEqual([1, 1, 2]);
    expect(new Set(spans.map((s) => s.spanContext().traceId)).size).toBe(1);
    // Payload capture is off by default: the task never reaches a span.
    expect(JSON.stringify(spans.map((s) => s.attributes))).not.toContain(CANARY);
  });

  it('captures payloads only when asked, and only through the redaction', async () => {
    const model = new FnModel(() => ({ content: `the answer mentions ${CANARY}` }));
    await runLoop({ model, modelName: 'm', system: 's', task: `find ${CANARY}`, maxSteps: 2, signal: new AbortController().signal, events: events(), trace: { payloads: (t) => t.replaceAll(CANARY, '[REDACTED]') } });
    const spans = exporter.getFinishedSpans();
    const chat = named(spans, 'chat m')[0]!;
    expect(String(chat.attributes['gen_ai.input.messages'])).toContain('find [REDACTED]');
    expect(String(chat.attributes['gen_ai.output.messages'])).toContain('the answer mentions [REDACTED]');
    expect(JSON.stringify(spans.map((s) => s.attributes))).not.toContain(CANARY);
  });

  it('a run given a traceparent continues that trace', async () => {
    const parent = trace.getTracer('test').startSpan('caller');
    const tp = traceparentOf(trace.setSpan(contextOf(undefined), parent))!;
    expect(tp).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
    await runLoop({ model: new FnModel(() => ({ content: 'ok' })), modelName: 'm', system: 's', task: 't', maxSteps: 2, signal: new AbortController().signal, events: events(), trace: { traceparent: tp } });
    parent.end();
    const run = exporter.getFinishedSpans().find((s) => s.name === 'invoke_agent')!;
    expect(run.spanContext().traceId).toBe(parent.spanContext().traceId);
    expect(parentOf(run)).toBe(parent.spanContext().spanId);
  });
});

function agent(name: string, responses: ScriptedReply[], delegates: string[] = []): AgentDefinition {
  const config = AgentConfigSchema.parse({ name, type: 'llm', brain: { provider: 'scripted', model: `scripted-${name}`, responses }, capabilities: { delegates } });
  return { name, config, systemPrompt: `You are ${name}.`, files: { config: 'c', prompt: 'p' } };
}

describe('the trace crosses boundaries', () => {
  it('a delegate receives the traceparent of the delegating call: its run is a child of that tool span', async () => {
    const a = agent('agent-a', [{ tool_calls: [{ name: 'delegate_to_agent_b', arguments: { task: 'say hi' } }] }, 'B said hi'], ['agent-b']);
    const b = agent('agent-b', ['hi']);
    const defs = new Map([a, b].map((d) => [d.name, d]));
    const ex = new LlmExecutor({ secret: () => undefined, agents: { get: (n) => defs.get(n) } });
    const r = await ex.run({ id: 'act_a', definition: a, context: { system: 's', task: 't' }, events: new EventLog('act_a'), signal: new AbortController().signal });
    expect(r.termination).toBe('final');
    const spans = exporter.getFinishedSpans();
    const tool = named(spans, 'execute_tool delegate_to_agent_b')[0]!;
    const child = named(spans, 'invoke_agent agent-b')[0]!;
    const parent = named(spans, 'invoke_agent agent-a')[0]!;
    expect(child.spanContext().traceId).toBe(parent.spanContext().traceId);
    expect(parentOf(child)).toBe(tool.spanContext().spanId);
  });

  it('an HTTP MCP server receives the traceparent of the tool call it serves', async () => {
    const set = await connectMcpServers([{ name: 'docs', url: mcp.url, headers: {} }], { grants: ['mcp:docs'], secret: () => undefined });
    try {
      const before = mcp.state.traceparents.length;
      const model = new FnModel((_r, n) => (n === 1 ? { calls: [{ name: 'docs__lookup', arguments: { q: 'warren' } }] } : { content: 'done' }));
      await runLoop({ model, modelName: 'm', system: 's', task: 't', maxSteps: 3, signal: new AbortController().signal, events: events(), tools: new ToolRegistry(set.tools, ['mcp:docs']) });
      const tool = named(exporter.getFinishedSpans(), 'execute_tool docs__lookup')[0]!;
      const seen = mcp.state.traceparents.slice(before);
      expect(seen).toContain(`00-${tool.spanContext().traceId}-${tool.spanContext().spanId}-01`);
    } finally {
      await set.close();
    }
  });
});

describe('the daemon exports over OTLP/HTTP', () => {
  const redisUrl = inject('redisUrl');
  let h: Harness | undefined;
  afterAll(async () => {
    await h?.stop();
  });

  it('each activation is one trace: warren.activation → invoke_agent → step → chat', async () => {
    trace.disable(); // the daemon registers its own provider
    const bodies: string[] = [];
    const collector = createServer((req, res) => {
      void readBody(req).then((b) => {
        bodies.push(b);
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((r) => collector.listen(0, '127.0.0.1', r));
    const endpoint = `http://127.0.0.1:${(collector.address() as AddressInfo).port}/v1/traces`;
    try {
      h = await startHarness({ redisUrl, agentsDir: makeAgentsDir({}), config: (c) => (c.tracing = { enabled: true, endpoint, service_name: 'warren-test', capture_payloads: false }) });
      const alice = await h.registerUser('alice');
      await h.api.post('/posts', alice, { content: '@greeter hello there' });
      const harness = h;
      await waitFor('one activation', () => (harness.outcomes.length === 1 ? true : undefined));
      await h.stop(); // flushes the last batch
      h = undefined;
      const spans = bodies.flatMap((b) => {
        const doc = JSON.parse(b) as { resourceSpans: Array<{ resource: { attributes: Array<{ key: string; value: { stringValue?: string } }> }; scopeSpans: Array<{ spans: Array<{ name: string; traceId: string; spanId: string; parentSpanId?: string }> }> }> };
        return doc.resourceSpans.flatMap((rs) => {
          expect(rs.resource.attributes).toContainEqual({ key: 'service.name', value: { stringValue: 'warren-test' } });
          return rs.scopeSpans.flatMap((ss) => ss.spans);
        });
      });
      const activation = spans.find((s) => s.name === 'warren.activation')!;
      expect(activation).toBeDefined();
      const inTrace = spans.filter((s) => s.traceId === activation.traceId);
      const byName = (n: string) => inTrace.filter((s) => s.name.startsWith(n));
      expect(byName('invoke_agent greeter')[0]?.parentSpanId).toBe(activation.spanId);
      expect(byName('warren.step')[0]?.parentSpanId).toBe(byName('invoke_agent greeter')[0]?.spanId);
      expect(byName('chat ')[0]?.parentSpanId).toBe(byName('warren.step')[0]?.spanId);
    } finally {
      collector.closeAllConnections();
      await new Promise<void>((r) => collector.close(() => r()));
    }
  });
});
