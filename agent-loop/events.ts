// The typed event stream of one activation (agent-loop.md R13): a monotonically numbered envelope per event.
import type { TokenUsage } from './messages.ts';
import type { TerminationReason } from './termination.ts';

export type ActivationEventBody =
  | { type: 'activation_start'; agent: string; executor: string }
  | { type: 'step_start'; step: number; max_steps: number }
  | { type: 'model_call'; model: string; attempt: number }
  | { type: 'model_result'; usage: TokenUsage; finish_reason: string }
  | { type: 'agent_response'; text: string; partial: boolean }
  | { type: 'error'; message: string }
  /** Something a CLI executor saw in its subprocess's output (tool calls, MCP status, rate limits). */
  | { type: 'cli_event'; cli: string; event: string; detail?: string }
  | { type: 'activation_end'; termination: TerminationReason; partial: boolean; usage: TokenUsage };

export type ActivationEvent = ActivationEventBody & { seq: number; activation_id: string; ts: string };

/** Numbers events and keeps them (bounded) for the activation record; forwards each to an optional listener. */
export class EventLog {
  readonly activationId: string;
  readonly events: ActivationEvent[] = [];
  #seq = 0;
  readonly #limit: number;
  readonly #listener: ((e: ActivationEvent) => void) | undefined;

  constructor(activationId: string, opts: { limit?: number; listener?: (e: ActivationEvent) => void } = {}) {
    this.activationId = activationId;
    this.#limit = opts.limit ?? 500;
    this.#listener = opts.listener;
  }

  emit(body: ActivationEventBody): ActivationEvent {
    const event = { ...body, seq: ++this.#seq, activation_id: this.activationId, ts: new Date().toISOString() };
    if (this.events.length < this.#limit) this.events.push(event);
    this.#listener?.(event);
    return event;
  }
}
