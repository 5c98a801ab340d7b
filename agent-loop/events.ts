// The typed event stream of one activation (docs/agent-loop.md R13): a monotonically numbered envelope per event.
import type { TokenUsage } from './messages.ts';
import type { TerminationReason } from './termination.ts';

/** How one tool call ended; every call gets exactly one (docs/agent-loop.md R5). */
export type ToolResultStatus = 'ok' | 'error' | 'cancelled' | 'timed_out' | 'denied' | 'rejected' | 'unknown_tool' | 'invalid_arguments';

export type ActivationEventBody =
  | { type: 'activation_start'; agent: string; executor: string }
  /** The task the run was given (KAOS's transcript name); `text` is its head, `chars` its full length. */
  | { type: 'user_message'; text: string; chars: number }
  | { type: 'step_start'; step: number; max_steps: number }
  | { type: 'model_call'; model: string; attempt: number }
  /**
   * Streamed model output as it arrives (coalesced), for live progress. Live only: listeners see it, the
   * activation record does not keep it (the answer is in `agent_response`), and it takes no number of its
   * own: its `seq` is that of the event it follows.
   */
  | { type: 'model_delta'; model: string; attempt: number; text: string }
  | { type: 'model_result'; usage: TokenUsage; finish_reason: string }
  | { type: 'model_retry'; model: string; attempt: number; delay_ms: number; message: string }
  | { type: 'model_fallback'; from: string; to: string; message: string }
  | { type: 'progress'; step: number; max_steps: number; action: 'tool_call' | 'delegate'; target: string }
  /** In a stored record, arguments over 2,000 characters of JSON are `{}` with `arguments_excerpt` and `full_length`. */
  | { type: 'tool_call'; id: string; name: string; arguments: Record<string, unknown>; arguments_excerpt?: string; full_length?: number }
  /** `full_length`: set when the output was longer than the cap, so the model saw head and tail only. */
  | { type: 'tool_result'; id: string; name: string; status: ToolResultStatus; excerpt: string; full_length?: number }
  /** `remote`: the card URL of a remote (A2A) delegate. */
  | { type: 'delegation_request'; id: string; agent: string; task: string; depth: number; max_tokens: number; max_duration_ms: number; remote?: string }
  /**
   * `events`: what the delegate did, its own events nested (at most MAX_NESTED_EVENTS, its own delegates' nested in
   * turn), so the parent's record shows it; `events_dropped`: how many more there were. `remote`: a remote (A2A)
   * delegate's task as it left it (`reattached`: a retried call found the task its first attempt started).
   */
  | { type: 'delegation_response'; id: string; agent: string; termination: TerminationReason; excerpt: string; tokens: number; events?: ActivationEvent[]; events_dropped?: number; remote?: RemoteTaskRef }
  | { type: 'delegation_error'; id: string; agent: string; message: string }
  | { type: 'compaction'; dropped_turns: number; before_tokens: number; after_tokens: number }
  /** `kind` names who warns: a guard (R2: repeat, identical_errors, failed_steps, duplicate), repair, the format or a limit. */
  | { type: 'loop_warning'; kind: 'repeat' | 'identical_errors' | 'failed_steps' | 'duplicate' | 'format' | 'repair' | 'limit' | 'approval'; message: string }
  | { type: 'budget_update'; used_tokens: number; max_tokens: number; cost_usd: number }
  /** `full_length`: set in a stored record whose `text` is the head of a longer answer. */
  | { type: 'agent_response'; text: string; partial: boolean; full_length?: number }
  | { type: 'error'; message: string }
  /**
   * An MCP server of the agent that could not be started or connected (`not_started`), or whose process ended
   * while the run still used it (`died`); `reason` is the error's message (the status post redacts it).
   */
  | { type: 'mcp_server'; server: string; status: 'not_started' | 'died'; reason: string }
  /** Something a CLI executor saw in its subprocess's output (tool calls, MCP status, rate limits). */
  | { type: 'cli_event'; cli: string; event: string; detail?: string }
  | { type: 'activation_end'; termination: TerminationReason; partial: boolean; usage: TokenUsage };

/** A remote delegate's task, by the ids a follow-up call continues it with. */
export interface RemoteTaskRef {
  task_id: string;
  context_id: string;
  state: string;
  reattached: boolean;
}

export type ActivationEvent = ActivationEventBody & { seq: number; activation_id: string; ts: string };

/** Numbers events and keeps them (bounded) for the activation record; forwards each, live ones too, to an optional listener. */
export class EventLog {
  readonly activationId: string;
  readonly events: ActivationEvent[] = [];
  #seq = 0;
  readonly #limit: number;
  readonly #listener: ((e: ActivationEvent) => void) | undefined;
  /** Listeners for part of the run (a task's source following its turn); see listen(). */
  readonly #more = new Set<(e: ActivationEvent) => void>();

  constructor(activationId: string, opts: { limit?: number; listener?: (e: ActivationEvent) => void } = {}) {
    this.activationId = activationId;
    this.#limit = opts.limit ?? 500;
    this.#listener = opts.listener;
  }

  emit(body: ActivationEventBody): ActivationEvent {
    const live = body.type === 'model_delta';
    const event = { ...body, seq: live ? this.#seq : ++this.#seq, activation_id: this.activationId, ts: new Date().toISOString() };
    if (!live && this.events.length < this.#limit) this.events.push(event);
    for (const l of [this.#listener, ...this.#more]) {
      try {
        l?.(event);
      } catch {
        // A listener (progress line, live status) that fails must not break the run that reports to it.
      }
    }
    return event;
  }

  /** Also forwards every event to `listener` until the returned function is called. */
  listen(listener: (e: ActivationEvent) => void): () => void {
    this.#more.add(listener);
    return () => void this.#more.delete(listener);
  }
}
