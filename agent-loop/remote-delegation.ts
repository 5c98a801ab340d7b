// Remote delegation (issue 29 item 1, docs/agent-loop.md R8): each remote entry of capabilities.delegates becomes
// `delegate_to_<name>` {task, task_id?, context_id?}, described from the remote agent's card. A call needs the
// grant `a2a:<name>`, keeps to the chain's depth and the run's budget and deadline (and the delegate's own
// timeout), sends the redacted task through the SDK's client with a message id derived from the call (a retried
// activation reattaches to the task its first attempt started), and redacts the answer. Aborted, timed out or
// stopped at a limit, it sends CancelTask. Events as a local delegation's: delegation_request, then
// delegation_response or delegation_error.
import { a2aContextId, a2aMessageId } from '../policy/idempotency-keys.ts';
import type { RemoteDelegate } from '../store/agent-config.ts';
import { AgentCardError, type AgentCardCache, type CachedCard } from './a2a-card.ts';
import { remoteDescription, toolResultOf, type RemoteReply } from './a2a-result.ts';
import { bearerOf, clientFor, RemoteCall } from './a2a-session.ts';
import { delegateToolName } from './delegate-name.ts';
import { delegationRefusal, MIN_DELEGATE_TOKENS } from './delegation.ts';
import type { EventLog } from './events.ts';
import { a2aDelegateGrant } from './grants.ts';
import { capOutput } from './tool-runner.ts';
import type { Tool, ToolOutcome } from './tools.ts';

/** How long building the tools waits for a card it has not read yet (the description); a call waits longer. */
const DESCRIBE_WAIT_MS = 3_000;

export interface RemoteDelegationOptions {
  delegates: readonly RemoteDelegate[];
  /** Agents from the root activation to this one, this one last. */
  chain: readonly string[];
  maxDepth?: number;
  events: EventLog;
  cards: AgentCardCache;
  /** Looks a bearer token up by variable name (environment, NAME_FILE, secrets.dir). */
  secret: (name: string) => string | undefined;
  /** The process's redactor: the task sent and the answer read pass it. */
  redact?: (text: string) => string;
  resultCap?: number;
  fetch?: typeof fetch;
  /** The run's own signal, to describe the tools without outliving it. */
  signal?: AbortSignal;
}

/** The tools of an agent's remote delegates; a card that cannot be read yet leaves a plainer description, not a failure. */
export async function remoteDelegationTools(opts: RemoteDelegationOptions): Promise<Tool[]> {
  const wait = opts.signal ? AbortSignal.any([opts.signal, AbortSignal.timeout(DESCRIBE_WAIT_MS)]) : AbortSignal.timeout(DESCRIBE_WAIT_MS);
  const cards = await Promise.all(opts.delegates.map((d) => opts.cards.get(d.card_url, wait).catch(() => undefined)));
  return opts.delegates.map((d, i) => remoteTool(d, cards[i], opts));
}

function remoteTool(d: RemoteDelegate, described: CachedCard | undefined, opts: RemoteDelegationOptions): Tool {
  const redact = opts.redact ?? ((t: string): string => t);
  let n = 0;
  return {
    definition: {
      name: delegateToolName(d.name),
      description: remoteDescription(d.name, described?.summary),
      parameters: {
        type: 'object',
        properties: {
          task: { type: 'string', description: 'what the remote agent should do, self-contained; or your answer to its question' },
          task_id: { type: 'string', description: 'only when answering its question: the task_id it gave' },
          context_id: { type: 'string', description: 'only when answering its question: the context_id it gave' },
        },
        required: ['task'],
        additionalProperties: false,
      },
    },
    readOnly: false,
    grant: a2aDelegateGrant(d.name),
    // The runner's own timeout must not cut the call short: the delegate's timeout and the run's deadline bound it.
    timeoutMs: 24 * 3600 * 1000,
    delegatesTo: d.name,
    execute: async (args, ctx): Promise<ToolOutcome> => {
      const id = `${ctx.callId}:${++n}`;
      const fail = (message: string): ToolOutcome => {
        opts.events.emit({ type: 'delegation_error', id, agent: d.name, message: redact(message) });
        return { status: 'error', content: redact(`Delegation failed: ${message}`) };
      };
      const text = redact(typeof args.task === 'string' ? args.task : '');
      const taskId = typeof args.task_id === 'string' && args.task_id ? args.task_id : undefined;
      const contextId = typeof args.context_id === 'string' && args.context_id ? args.context_id : undefined;
      if (!text.trim()) return fail('the task is empty');
      const remaining = ctx.remaining ?? { tokens: Infinity, ms: Infinity };
      const refusal = delegationRefusal(opts.chain, d.name, opts.maxDepth) ?? (remaining.tokens < MIN_DELEGATE_TOKENS ? `not enough budget left (${remaining.tokens} tokens)` : undefined);
      if (refusal) return fail(refusal);
      const limitMs = Math.min(d.timeout, remaining.ms);
      opts.events.emit({ type: 'delegation_request', id, agent: d.name, task: text, depth: opts.chain.length, max_tokens: remaining.tokens, max_duration_ms: limitMs, remote: d.card_url });

      let call: RemoteCall;
      let refused: () => number | undefined;
      try {
        const card = await opts.cards.get(d.card_url, ctx.signal);
        const http = await clientFor(card, await bearerOf(d.auth, opts.secret), opts.fetch);
        refused = http.refused;
        call = new RemoteCall(http.client, { text, messageId: a2aMessageId(ctx.idempotencyKey), newContextId: a2aContextId(ctx.idempotencyKey), taskId, contextId, streaming: d.streaming && card.summary.streaming });
      } catch (err) {
        return fail(err instanceof AgentCardError ? `${d.name} cannot be reached: ${err.message}` : `${d.name}: ${errorText(err)}`);
      }
      const deadline = AbortSignal.timeout(Math.max(1, limitMs));
      const signal = AbortSignal.any([ctx.signal, deadline]);
      let reply: RemoteReply;
      try {
        reply = await call.run(signal);
      } catch (err) {
        const status = refused();
        if (status) return fail(`${d.name} refused the call (HTTP ${status}): check its auth (capabilities.delegates, ${d.auth ? Object.keys(d.auth)[0] : 'no auth set'})`);
        if (!signal.aborted) return fail(`${d.name}: ${errorText(err)}`);
        // Aborted, out of time or stopped at the step's limit: the remote task is not left running.
        const cancel = await call.cancel();
        const why = ctx.signal.aborted ? 'the run stopped it' : `no answer within ${Math.round(limitMs / 1000)} s`;
        const what = cancel.cancelled.length ? `the remote task ${cancel.cancelled.join(', ')} was cancelled` : cancel.error ? `CancelTask failed: ${cancel.error}` : 'no remote task had started';
        return fail(`${d.name}: ${why}; ${what}`);
      }
      const result = toolResultOf(d.name, reply);
      const content = redact(result.content);
      opts.events.emit({
        type: 'delegation_response',
        id,
        agent: d.name,
        termination: result.termination,
        excerpt: content.slice(0, 200),
        tokens: 0,
        ...(reply.kind === 'task' ? { remote: { task_id: reply.taskId, context_id: reply.contextId, state: reply.state, reattached: call.known.reattached } } : {}),
      });
      return { status: result.status, content: capOutput(content, opts.resultCap ?? 8000) };
    },
  };
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
