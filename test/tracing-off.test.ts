// Tracing off (no OpenTelemetry SDK registered, the default): spans are no-ops, and the trace a run continues still
// reaches its children without a context built per span (agent-loop/tracing.ts addsSpan). With an SDK: tracing.test.ts.
import { INVALID_SPAN_CONTEXT, ROOT_CONTEXT, TraceFlags, type SpanContext } from '@opentelemetry/api';
import { describe, expect, it } from 'vitest';
import { addsSpan, contextOf, startSpan, traceparentOf } from '../agent-loop/tracing.ts';

const TP = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
const parent: SpanContext = { traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331', traceFlags: TraceFlags.SAMPLED, isRemote: true };

describe('addsSpan', () => {
  it.each<[string, boolean, SpanContext, SpanContext | undefined, boolean]>([
    ['a recording span', true, { ...parent, spanId: '00f067aa0ba902b7', isRemote: false }, parent, true],
    ['a recording root span', true, { ...parent, spanId: '00f067aa0ba902b7' }, undefined, true],
    ['the no-op span under a parent: its parent span context', false, parent, parent, false],
    ['the no-op span under none: invalid', false, INVALID_SPAN_CONTEXT, undefined, false],
    ['the no-op span under an invalid parent', false, INVALID_SPAN_CONTEXT, INVALID_SPAN_CONTEXT, false],
    ['a sampled-out span with an id of its own', false, { ...parent, spanId: '00f067aa0ba902b7', traceFlags: TraceFlags.NONE }, parent, true],
    ['a sampled-out span that flips the flags', false, { ...parent, traceFlags: TraceFlags.NONE }, parent, true],
    ['a sampled-out root span', false, { ...parent, spanId: '00f067aa0ba902b7', traceFlags: TraceFlags.NONE }, undefined, true],
  ])('%s', (_what, recording, span, under, expected) => {
    expect(addsSpan(recording, span, under)).toBe(expected);
  });
});

describe('spans with tracing off', () => {
  it('hand their parent context on, so a traceparent reaches the children unchanged', () => {
    const run = startSpan('invoke_agent', contextOf(TP));
    const step = startSpan('warren.step', run.context);
    const chat = startSpan('chat m', step.context);
    expect(run.span.isRecording()).toBe(false);
    expect(chat.context).toBe(run.context);
    expect(traceparentOf(chat.context)).toBe(TP);
  });

  it('without a traceparent, give none to their children', () => {
    const root = startSpan('warren.activation', ROOT_CONTEXT);
    expect(root.context).toBe(ROOT_CONTEXT);
    expect(traceparentOf(startSpan('invoke_agent', root.context).context)).toBeUndefined();
  });
});
