// The agent loop: context → model → answer. This first slice offers the model no tools, so a run is
// one model call; the loop still owns termination, usage and events so tools can be added without
// changing its callers.
import type { EventLog } from './events.ts';
import { addUsage, ZERO_USAGE, type ChatMessage, type TokenUsage } from './messages.ts';
import { ModelError, type ChatModel } from './model.ts';
import { isNoActionSentinel, type TerminationReason } from './termination.ts';

export interface LoopInput {
  model: ChatModel;
  modelName: string;
  system: string;
  task: string;
  temperature?: number;
  maxTokens?: number;
  maxSteps: number;
  signal: AbortSignal;
  events: EventLog;
  onDelta?: (text: string) => void;
}

export interface LoopResult {
  /** The answer to post; empty when the run ended without one. */
  text: string;
  termination: TerminationReason;
  partial: boolean;
  usage: TokenUsage;
  steps: number;
  /** Set when termination is `error`; `retryable` tells the caller whether trying again may help. */
  error?: { message: string; retryable: boolean };
}

export async function runLoop(input: LoopInput): Promise<LoopResult> {
  const messages: ChatMessage[] = [
    { role: 'system', content: input.system },
    { role: 'user', content: input.task },
  ];
  let usage: TokenUsage = ZERO_USAGE;
  const step = 1;
  const end = (r: Omit<LoopResult, 'usage' | 'steps'>): LoopResult => {
    input.events.emit({ type: 'activation_end', termination: r.termination, partial: r.partial, usage });
    return { ...r, usage, steps: step };
  };

  input.events.emit({ type: 'step_start', step, max_steps: input.maxSteps });
  input.events.emit({ type: 'model_call', model: input.modelName, attempt: 1 });
  try {
    const res = await input.model.complete({
      model: input.modelName,
      messages,
      temperature: input.temperature,
      maxTokens: input.maxTokens,
      signal: input.signal,
      onDelta: input.onDelta,
    });
    usage = addUsage(usage, res.usage);
    input.events.emit({ type: 'model_result', usage: res.usage, finish_reason: res.finishReason });
    const text = (res.content ?? '').trim();
    if (isNoActionSentinel(text)) return end({ text: '', termination: 'no_action', partial: false });
    // An empty reply is a final answer with nothing to post (R2), flagged so it can be noticed.
    if (text === '') input.events.emit({ type: 'error', message: 'model returned an empty reply' });
    input.events.emit({ type: 'agent_response', text, partial: false });
    return end({ text, termination: 'final', partial: false });
  } catch (err) {
    if (input.signal.aborted) return end({ text: '', termination: 'aborted', partial: false, error: { message: 'aborted', retryable: true } });
    const message = err instanceof Error ? err.message : String(err);
    const retryable = err instanceof ModelError ? err.retryable : false;
    input.events.emit({ type: 'error', message });
    return end({ text: '', termination: 'error', partial: false, error: { message, retryable } });
  }
}
