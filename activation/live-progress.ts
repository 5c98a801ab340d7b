// What a running activation is doing right now, for `warren status`: a small summary folded from its event
// stream and published through BullMQ's job progress (docs/agent-loop.md R13: live status via job.updateProgress
// with small payloads). Throttled, because a streaming model emits many events a second.
import { z } from 'zod';
import type { ActivationEvent } from '../agent-loop/events.ts';

/** A job's progress as read back from Redis: what another worker version wrote may not fit, so it is checked. */
export const LiveProgressSchema = z.object({
  activation_id: z.string(),
  step: z.number(),
  max_steps: z.number(),
  /** What the run waits on: the model (`thinking`), its streamed answer (`writing`), a tool or a delegate. */
  action: z.enum(['starting', 'thinking', 'writing', 'tool_call', 'delegate', 'retrying']),
  /** The tool, delegate or model the action is about. */
  target: z.string(),
  /** Characters of model output streamed in this step so far. */
  streamed_chars: z.number(),
  tokens: z.number(),
  updated_at: z.string(),
});

export type LiveProgress = z.infer<typeof LiveProgressSchema>;

/** The summary after one more event (pure); the same object when the event changes nothing shown. */
export function foldProgress(p: LiveProgress, e: ActivationEvent): LiveProgress {
  const at = e.ts;
  switch (e.type) {
    case 'step_start':
      return { ...p, step: e.step, max_steps: e.max_steps, action: 'thinking', target: '', streamed_chars: 0, updated_at: at };
    case 'model_call':
      return { ...p, action: 'thinking', target: e.model, updated_at: at };
    case 'model_delta':
      return { ...p, action: 'writing', target: e.model, streamed_chars: p.streamed_chars + e.text.length, updated_at: at };
    case 'model_retry':
      return { ...p, action: 'retrying', target: e.model, streamed_chars: 0, updated_at: at };
    case 'progress':
      // A tool name the model made up can be anything: kept short in the job's progress (BullMQ's hash).
      return { ...p, action: e.action, target: e.target.slice(0, 64), updated_at: at };
    case 'budget_update':
      return { ...p, tokens: e.used_tokens, updated_at: at };
    default:
      return p;
  }
}

export function initialProgress(activationId: string, now = new Date()): LiveProgress {
  return { activation_id: activationId, step: 0, max_steps: 0, action: 'starting', target: '', streamed_chars: 0, tokens: 0, updated_at: now.toISOString() };
}

/**
 * Folds events and publishes the summary at most every `minIntervalMs` (the last change is never lost:
 * it goes out when the interval ends). Publishing errors are the caller's to log; they never stop a run.
 */
export class ProgressPublisher {
  #current: LiveProgress;
  #published: LiveProgress | undefined;
  #timer: NodeJS.Timeout | undefined;
  #lastAt = 0;
  readonly #publish: (p: LiveProgress) => Promise<void>;
  readonly #minIntervalMs: number;

  constructor(activationId: string, publish: (p: LiveProgress) => Promise<void>, minIntervalMs = 500) {
    this.#current = initialProgress(activationId);
    this.#publish = publish;
    this.#minIntervalMs = minIntervalMs;
  }

  get current(): LiveProgress {
    return this.#current;
  }

  observe(e: ActivationEvent): void {
    const next = foldProgress(this.#current, e);
    if (next === this.#current) return;
    this.#current = next;
    if (this.#timer) return;
    const wait = this.#lastAt + this.#minIntervalMs - Date.now();
    if (wait <= 0) this.#send();
    else this.#timer = setTimeout(() => this.#send(), wait);
  }

  /**
   * The attempt began. Its state goes out after one interval, with whatever happened by then: a run shorter
   * than that costs no write at all, and a retried attempt replaces the previous attempt's step promptly.
   */
  start(): void {
    this.#lastAt = Date.now();
    this.#timer ??= setTimeout(() => this.#send(), this.#minIntervalMs);
  }

  /** The run is over: nothing more is published. */
  stop(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #send(): void {
    this.#timer = undefined;
    if (this.#published === this.#current) return;
    this.#published = this.#current;
    this.#lastAt = Date.now();
    void this.#publish(this.#current);
  }
}
