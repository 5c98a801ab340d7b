// OpenTelemetry spans for a run (docs/agent-loop.md R13): invoke_agent → step → chat (one per model attempt) or
// execute_tool, named after the GenAI semantic conventions. Only the OpenTelemetry API is used here: without
// a registered SDK every span is a no-op, so tracing costs nothing unless the daemon turns it on. Parents are
// passed explicitly (no global context manager needed); across a boundary (a delegate, an HTTP MCP server, a
// CLI subprocess) the W3C `traceparent` carries the trace.
import { AsyncLocalStorage } from 'node:async_hooks';
import { isSpanContextValid, ROOT_CONTEXT, SpanStatusCode, trace, type Attributes, type Context, type Span, type SpanContext, type TextMapGetter, type TextMapSetter } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';

/** How a run is traced. */
export interface TraceOptions {
  /** A W3C traceparent the run's spans continue (the activation's, or a delegating tool call's). */
  traceparent?: string;
  /** When set, prompts, answers, tool arguments and results go into spans, through this function (redaction). */
  payloads?: (text: string) => string;
}

/** A started span and the context its children hang from. */
export interface SpanHandle {
  span: Span;
  context: Context;
}

const propagator = new W3CTraceContextPropagator();
const PAYLOAD_CAP = 16_000;

export function startSpan(name: string, parent: Context, attributes: Attributes = {}): SpanHandle {
  const span = trace.getTracer('warren').startSpan(name, { attributes }, parent);
  return { span, context: addsSpan(span.isRecording(), span.spanContext(), trace.getSpanContext(parent)) ? trace.setSpan(parent, span) : parent };
}

/**
 * Whether a new span's children need a context of their own. Tracing off (no SDK), the no-op tracer's span carries
 * its parent's span context, or an invalid one under none: its children see the same trace through the parent's
 * context, and a context per span (a map and three closures, ≈ 450 bytes) is not built for each of the four
 * spans an activation holds open while it waits on its model. A recording span, or a sampled-out one with an id
 * of its own, gets its context as before.
 */
export function addsSpan(recording: boolean, span: SpanContext, parent: SpanContext | undefined): boolean {
  if (recording) return true;
  if (!parent) return isSpanContextValid(span);
  return span.traceId !== parent.traceId || span.spanId !== parent.spanId || span.traceFlags !== parent.traceFlags;
}

/** Ends a span with an error status when `error` is given (its message, never a payload). */
export function endSpan(h: SpanHandle | undefined, attributes: Attributes = {}, error?: string): void {
  if (!h) return;
  h.span.setAttributes(attributes);
  if (error !== undefined) h.span.setStatus({ code: SpanStatusCode.ERROR, message: error });
  h.span.end();
}

/** The context a traceparent stands for (the root when there is none or it does not parse). */
export function contextOf(traceparent: string | undefined): Context {
  if (!traceparent) return ROOT_CONTEXT;
  const getter: TextMapGetter<Record<string, string>> = { get: (c, k) => c[k], keys: (c) => Object.keys(c) };
  return propagator.extract(ROOT_CONTEXT, { traceparent }, getter);
}

/** The traceparent of a context's span; undefined when there is no valid one (tracing off and no parent). */
export function traceparentOf(ctx: Context): string | undefined {
  const carrier: Record<string, string> = {};
  const setter: TextMapSetter<Record<string, string>> = { set: (c, k, v) => void (c[k] = v) };
  propagator.inject(ctx, carrier, setter);
  return carrier.traceparent;
}

// The traceparent of the tool call running in this async context, for outgoing HTTP made on its behalf
// (MCP's SDK offers no per-request headers, but its fetch runs inside the call).
const outgoing = new AsyncLocalStorage<string | undefined>();

export function withTraceparent<T>(traceparent: string | undefined, fn: () => T): T {
  return outgoing.run(traceparent, fn);
}

export function currentTraceparent(): string | undefined {
  return outgoing.getStore();
}

/** A payload attribute, when payload capture is on: passed through its redaction and capped. */
export function payloadAttributes(opts: TraceOptions | undefined, attrs: Record<string, () => unknown>): Attributes {
  if (!opts?.payloads) return {};
  const out: Attributes = {};
  for (const [k, v] of Object.entries(attrs)) {
    const value = v();
    // Redacted whole, then capped: a secret cut in two by the cap would no longer match the redaction.
    const text = opts.payloads(typeof value === 'string' ? value : JSON.stringify(value));
    out[k] = text.length > PAYLOAD_CAP ? `${text.slice(0, PAYLOAD_CAP)}…` : text;
  }
  return out;
}
