// Model calls with retries and fallback (docs/agent-loop.md R12): retryable failures (network, timeouts, and the
// statuses policy/retryable-status.ts lets pass: 408, 409, 425, 429, 5xx) are retried with exponential backoff and equal jitter, honouring retry-after; after the attempts
// for one model are spent the next of brain.fallback_models is tried, and the switch is an event. Anything
// else (400, 401, 403, 404, 422, an abort) is final at once.
import { backoffDelayMs } from '../policy/exponential-backoff.ts';
import type { EventLog } from './events.ts';
import { ModelError, type ChatModel, type ModelRequest, type ModelResponse } from './model.ts';
import type { Context } from '@opentelemetry/api';
import { oversizeOfResponse } from './oversized-output.ts';
import { StreamProgress } from './stream-progress.ts';
import { endSpan, payloadAttributes, startSpan, type TraceOptions } from './tracing.ts';

export interface RetryPolicy {
  attemptsPerModel: number;
  initialDelayMs: number;
  maxDelayMs: number;
  /** retry-after above this is not waited for: the next model is tried instead. */
  maxRetryAfterMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = { attemptsPerModel: 3, initialDelayMs: 250, maxDelayMs: 2000, maxRetryAfterMs: 60_000 };

/**
 * The wait before retry number `attempt` (1 = first retry): retry-after when given, else doubling from
 * initialDelayMs up to maxDelayMs with equal jitter (between half and all of it).
 */
export function backoffMs(attempt: number, policy: RetryPolicy, retryAfterMs: number | undefined, random: () => number = Math.random): number {
  if (retryAfterMs !== undefined) return retryAfterMs;
  return backoffDelayMs({ baseMs: policy.initialDelayMs, factor: 2, capMs: policy.maxDelayMs, jitter: 'equal' }, attempt, random);
}

export interface CallResult {
  response: ModelResponse;
  model: string;
  attempt: number;
  latencyMs: number;
}

/** Where a call's spans hang: each attempt is a `chat <model>` span under `parent`. */
export interface CallTracing {
  parent: Context;
  options?: TraceOptions;
}

/** Streamed text goes out as live `model_delta` events (see stream-progress.ts). */
export async function callWithRetries(model: ChatModel, models: readonly string[], req: Omit<ModelRequest, 'model' | 'onDelta'>, events: EventLog, policy: RetryPolicy = DEFAULT_RETRY, tracing?: CallTracing): Promise<CallResult> {
  let lastError: ModelError | undefined;
  for (const [mi, name] of models.entries()) {
    if (mi > 0) events.emit({ type: 'model_fallback', from: models[mi - 1]!, to: name, message: lastError?.message ?? '' });
    for (let attempt = 1; attempt <= policy.attemptsPerModel; attempt++) {
      events.emit({ type: 'model_call', model: name, attempt });
      const started = Date.now();
      // Per attempt, so a failed attempt's streamed text never runs into the next one's.
      const progress = new StreamProgress(events, { model: name, attempt });
      const span = tracing
        ? startSpan(`chat ${name}`, tracing.parent, {
            'gen_ai.operation.name': 'chat',
            'gen_ai.request.model': name,
            'warren.attempt': attempt,
            ...(req.maxTokens ? { 'gen_ai.request.max_tokens': req.maxTokens } : {}),
            ...payloadAttributes(tracing.options, { 'gen_ai.input.messages': () => req.messages }),
          })
        : undefined;
      try {
        const response = await model.complete({ ...req, model: name, onDelta: (t) => progress.push(t) });
        // A streamed answer is bounded as it is read; one that came in whole (or from any other ChatModel) here.
        const oversized = req.bounds && oversizeOfResponse(response, req.bounds);
        if (oversized) throw oversized;
        progress.flush();
        endSpan(span, {
          'gen_ai.response.model': response.model,
          'gen_ai.response.finish_reasons': [response.finishReason],
          'gen_ai.usage.input_tokens': response.usage.inputTokens,
          'gen_ai.usage.output_tokens': response.usage.outputTokens,
          ...payloadAttributes(tracing?.options, { 'gen_ai.output.messages': () => ({ content: response.content, tool_calls: response.toolCalls }) }),
        });
        return { response, model: name, attempt, latencyMs: Date.now() - started };
      } catch (err) {
        progress.flush();
        const e = err instanceof ModelError ? err : new ModelError(err instanceof Error ? err.message : String(err), { retryable: false, cause: err });
        endSpan(span, { 'error.type': e.status ? String(e.status) : e.name }, e.message);
        if (req.signal?.aborted || !e.retryable) throw e;
        lastError = e;
        if (e.retryAfterMs !== undefined && e.retryAfterMs > policy.maxRetryAfterMs) break;
        if (attempt === policy.attemptsPerModel) break;
        const wait = backoffMs(attempt, policy, e.retryAfterMs);
        events.emit({ type: 'model_retry', model: name, attempt, delay_ms: wait, message: e.message });
        await sleep(wait, req.signal);
      }
    }
  }
  throw lastError ?? new ModelError('no model configured', { retryable: false });
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new ModelError('model call aborted', { retryable: false }));
    const onAbort = (): void => {
      clearTimeout(t);
      reject(new ModelError('model call aborted', { retryable: false }));
    };
    const t = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
