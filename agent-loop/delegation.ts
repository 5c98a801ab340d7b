// Delegation (docs/agent-loop.md R8): each name in capabilities.delegates becomes `delegate_to_<agent>` {task}.
// The delegate runs as its own activation, with its own definition, prompt and grants; the chain of agents
// is checked first (depth limit, cycles refused with an error the model sees), and the child's tokens and
// time are carved out of what the parent has left, so a child can never spend the parent's margin. The
// child's model calls are charged to the parent's ledger; aborting the parent aborts the child.
import { delegateToolName } from './delegate-name.ts';
import type { ActivationEvent, EventLog } from './events.ts';
import type { TerminationReason } from './termination.ts';
import { capOutput } from './tool-runner.ts';
import type { Tool } from './tools.ts';
import type { LedgerEntry } from './usage-ledger.ts';

export const DEFAULT_MAX_DEPTH = 2;
/** Below this many tokens a delegate could not do anything useful: refuse instead of starting it. */
export const MIN_DELEGATE_TOKENS = 1000;
/** A delegate's own events kept in its parent's record (the first ones: the task, its steps, its calls). */
export const MAX_NESTED_EVENTS = 100;

export interface DelegateLimits {
  maxTokens: number;
  maxDurationMs: number;
  /** The chain including the child, root first. */
  chain: string[];
  signal: AbortSignal;
  /** The delegating call's traceparent: the delegate's spans continue the parent's trace. */
  traceparent?: string;
}

export interface DelegateOutcome {
  text: string;
  termination: TerminationReason;
  ledger: readonly LedgerEntry[];
  error?: string;
  /** The delegate left its work undone (executors/run-outcome.ts decides; a guard or limit stop included). */
  failed: boolean;
  /** The delegate's own events, for its parent's record. */
  events?: readonly ActivationEvent[];
}

/** The delegate's events as its parent's record keeps them: the first MAX_NESTED_EVENTS, and how many were left out. */
export function nestedEvents(events: readonly ActivationEvent[] | undefined): { events?: ActivationEvent[]; events_dropped?: number } {
  if (!events?.length) return {};
  const kept = events.slice(0, MAX_NESTED_EVENTS);
  return { events: kept, ...(events.length > kept.length ? { events_dropped: events.length - kept.length } : {}) };
}

export interface DelegationOptions {
  delegates: readonly string[];
  /** Agents from the root activation to this one, this one last. */
  chain: readonly string[];
  maxDepth?: number;
  events: EventLog;
  resultCap?: number;
  run(agent: string, task: string, limits: DelegateLimits): Promise<DelegateOutcome>;
}

/** Why delegating to `target` from the end of `chain` is refused, or undefined when it is allowed. */
export function delegationRefusal(chain: readonly string[], target: string, maxDepth = DEFAULT_MAX_DEPTH): string | undefined {
  if (chain.includes(target)) return `cycle: ${[...chain, target].join(' → ')} is refused`;
  if (chain.length > maxDepth) return `depth limit: ${chain.join(' → ')} is already ${chain.length - 1} delegation(s) deep (at most ${maxDepth})`;
  return undefined;
}

export function delegationTools(opts: DelegationOptions): Tool[] {
  let n = 0;
  return opts.delegates.map((agent): Tool => ({
    definition: {
      name: delegateToolName(agent),
      description: `Ask the agent ${agent} to do a task; its answer comes back as the result.`,
      parameters: { type: 'object', properties: { task: { type: 'string', description: 'what the delegate should do, self-contained' } }, required: ['task'], additionalProperties: false },
    },
    // A delegate may post: unknown effects count as mutating, so delegations run one at a time.
    readOnly: false,
    // The runner's own timeout must not cut the child short: the child's carved deadline bounds it.
    timeoutMs: 24 * 3600 * 1000,
    reportsUsage: true,
    delegatesTo: agent,
    execute: async (args, ctx) => {
      const id = `${ctx.callId}:${++n}`;
      const task = typeof args.task === 'string' ? args.task : '';
      const refusal = delegationRefusal(opts.chain, agent, opts.maxDepth);
      const remaining = ctx.remaining ?? { tokens: Infinity, ms: Infinity };
      const failure = refusal ?? (remaining.tokens < MIN_DELEGATE_TOKENS ? `not enough budget left (${remaining.tokens} tokens)` : undefined);
      if (failure) {
        opts.events.emit({ type: 'delegation_error', id, agent, message: failure });
        return { status: 'error', content: `Delegation failed: ${failure}.` };
      }
      const limits: DelegateLimits = { maxTokens: remaining.tokens, maxDurationMs: remaining.ms, chain: [...opts.chain, agent], signal: ctx.signal, traceparent: ctx.traceparent };
      opts.events.emit({ type: 'delegation_request', id, agent, task, depth: opts.chain.length, max_tokens: limits.maxTokens, max_duration_ms: limits.maxDurationMs });
      try {
        const out = await opts.run(agent, task, limits);
        const tokens = out.ledger.reduce((s, e) => s + e.inputTokens + e.outputTokens, 0);
        opts.events.emit({ type: 'delegation_response', id, agent, termination: out.termination, excerpt: out.text.slice(0, 200), tokens, ...nestedEvents(out.events) });
        const ok = !out.failed;
        const body = ok ? out.text || `(${agent} ended with ${out.termination} and no answer)` : `Delegation failed: ${agent} ended with ${out.termination}${out.error ? `: ${out.error}` : ''}`;
        return { status: ok ? 'ok' : 'error', content: capOutput(body, opts.resultCap ?? 8000), ledger: out.ledger };
      } catch (err) {
        const message = err instanceof Error ? err.message : String(err);
        opts.events.emit({ type: 'delegation_error', id, agent, message });
        return { status: 'error', content: `Delegation failed: ${message}` };
      }
    },
  }));
}
