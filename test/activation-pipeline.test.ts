// The activation pipeline on its unit-test seam: an in-memory hub and a stub executor, no Redis, no hub process.
// Each way a run can end, what the pipeline then does with the notification, and the reply outbox across a retry.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { ActivationError, runActivation, type ActivationDeps } from '../activation/activation.ts';
import { decideFailure, errorFingerprint, HUB_FAILURE_PAUSE_MS, resetsBackoff, shouldGiveUp } from '../activation/failure-policy.ts';
import { backoffSchedule } from '../scheduler/backoff.ts';
import { relativeStack } from '../activation/error-post.ts';
import { MemoryReplyOutbox } from '../activation/reply-outbox.ts';
import { outcomeOfError, outcomeOfRun } from '../executors/run-outcome.ts';
import { ExecutorSetupError, type ExecutorResult } from '../executors/executor.ts';
import { HubError } from '../hub-client/errors.ts';
import { ModelError } from '../agent-loop/model.ts';
import { AgentConfigSchema } from '../store/agent-config.ts';
import type { Post } from '../hub-client/types.ts';
import type { InboxClaim, InboxOpened } from '../scheduler/inbox-claims.ts';
import type { AgentDefinition } from '../store/definition.ts';
import { MemoryHub } from './support/memory-hub.ts';
import { StubExecutor, type StubRun } from './support/stub-executor.ts';

const agent: AgentDefinition = {
  name: 'greeter',
  config: AgentConfigSchema.parse({ name: 'greeter', description: 'Says hello.', type: 'llm', brain: { model: 'm' }, capabilities: { grants: ['hub:read', 'hub:write'] } }),
  systemPrompt: 'You are {{name}}.',
  files: { config: 'config.yaml', prompt: 'system-prompt.md' },
};

function world(runs: StubRun[]): { hub: MemoryHub; executor: StubExecutor; outbox: MemoryReplyOutbox; deps: ActivationDeps } {
  const hub = new MemoryHub();
  const executor = new StubExecutor(runs);
  const outbox = new MemoryReplyOutbox();
  const deps: ActivationDeps = { hub, agents: { get: (n) => (n === agent.name ? agent : undefined) }, executors: { resolve: () => ({ executor }) }, outbox, logger: pino({ level: 'silent' }), redact: (text) => text };
  return { hub, executor, outbox, deps };
}

const job = { agent: 'greeter', trigger: 'notification' as const, enqueuedAt: Date.now() };
const signal = new AbortController().signal;

async function failureOf(p: Promise<unknown>): Promise<ActivationError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(err instanceof ActivationError)) throw new Error(`expected an ActivationError, got ${String(err)}`);
  return err;
}

describe('the pipeline on an in-memory hub', () => {
  it('the model answered, the post failed, the retry posts the kept answer without running the model again', async () => {
    const w = world([{ termination: 'final', text: 'Hello Dana!' }]);
    const { notification, post } = w.hub.mention('greeter', 'dana', '@greeter hi');
    w.hub.failNext('createComment');
    const err = await failureOf(runActivation(w.deps, 'act-1', job, signal, { attempt: 1 }));
    expect(err.outcome).toMatchObject({ kind: 'retryable_failure', source: 'hub' });
    expect(err.task?.notificationId).toBe(notification.id);
    expect(await w.outbox.get('greeter', notification.id)).toBe('Hello Dana!');
    expect(w.hub.unread('greeter')).toHaveLength(1);

    const outcome = await runActivation(w.deps, 'act-1', job, signal, { attempt: 2 });
    expect(outcome.outcome).toMatchObject({ kind: 'answered', text: 'Hello Dana!' });
    expect(w.executor.inputs).toHaveLength(1);
    expect(w.hub.commentsOn(post.id).map((c) => c.content)).toEqual(['Hello Dana!']);
    // The same key each time: whichever attempt reaches the hub, it keeps one reply.
    const keys = w.hub.writes.filter((x) => x.method === 'createComment').map((x) => x.idempotencyKey);
    expect(keys).toEqual([`notification:${notification.id}:reply`]);
    expect(w.hub.unread('greeter')).toHaveLength(0);
    expect(w.outbox.size).toBe(0);
  });

  it('a reply replayed under its key after the hub lost the answer on the way posts once', async () => {
    const w = world([{ termination: 'final', text: 'Once.' }]);
    const { post } = w.hub.mention('greeter', 'dana', '@greeter hi');
    w.hub.failNext('markRead');
    await failureOf(runActivation(w.deps, 'act-2', job, signal, { attempt: 1 }));
    await runActivation(w.deps, 'act-2', job, signal, { attempt: 2 });
    expect(w.hub.commentsOn(post.id)).toHaveLength(1);
  });

  it.each<[string, StubRun, string]>([
    ['a loop guard', { termination: 'loop_detected', text: '' }, 'guard_stop'],
    ['the error breaker', { termination: 'circuit_open', text: '' }, 'guard_stop'],
    ['max_steps without an answer', { termination: 'max_steps', text: '', partial: true }, 'limit_stop'],
    ['a non-retryable model error', { termination: 'error', error: { message: 'HTTP 400', retryable: false } }, 'terminal_failure'],
    ['a retryable model error', { termination: 'error', error: { message: 'HTTP 500', retryable: true } }, 'retryable_failure'],
  ])('%s leaves the notification unread, nothing posted, and fails with its kind', async (_what, run, kind) => {
    const w = world([run]);
    const { post } = w.hub.mention('greeter', 'dana', '@greeter hi');
    const err = await failureOf(runActivation(w.deps, 'act-3', job, signal));
    expect(err.outcome.kind).toBe(kind);
    expect(w.hub.unread('greeter')).toHaveLength(1);
    expect(w.hub.commentsOn(post.id)).toHaveLength(0);
  });

  it('a partial answer at a limit is still an answer: posted and read', async () => {
    const w = world([{ termination: 'max_steps', text: 'Best I have.', partial: true }]);
    const { post } = w.hub.mention('greeter', 'dana', '@greeter hi');
    const outcome = await runActivation(w.deps, 'act-4', job, signal);
    expect(outcome.outcome).toMatchObject({ kind: 'answered', partial: true });
    expect(w.hub.commentsOn(post.id).map((c) => c.content)).toEqual(['Best I have.']);
  });

  it('no action and posted-by-tool mark the notification read without a pipeline reply', async () => {
    for (const [run, kind] of [
      [{ termination: 'no_action' }, 'no_action'],
      [{ termination: 'final', posted: true }, 'posted_by_tool'],
    ] as const) {
      const w = world([run]);
      const { post } = w.hub.mention('greeter', 'dana', '@greeter hi');
      const outcome = await runActivation(w.deps, 'act-5', job, signal);
      expect(outcome.outcome.kind).toBe(kind);
      expect(w.hub.unread('greeter')).toHaveLength(0);
      expect(w.hub.commentsOn(post.id)).toHaveLength(0);
    }
  });

  it('an executor that cannot run the agent is a terminal failure; a budget at critical skips', async () => {
    const w = world([]);
    w.hub.mention('greeter', 'dana', '@greeter hi');
    const err = await failureOf(runActivation({ ...w.deps, executors: { resolve: () => ({ unavailable: 'no key' }) } }, 'act-6', job, signal));
    expect(err.outcome).toMatchObject({ kind: 'terminal_failure', source: 'agent' });
    w.hub.budget = 'critical';
    expect((await runActivation(w.deps, 'act-7', job, signal)).outcome).toEqual({ kind: 'skipped', reason: 'budget_critical' });
  });

  it('a shutdown during the run is an abort (not the agent’s failure); the activation’s own deadline is a retryable failure', async () => {
    const w = world([{ termination: 'aborted', error: { message: 'aborted', retryable: true } }, { termination: 'aborted', error: { message: 'aborted', retryable: true } }]);
    w.hub.mention('greeter', 'dana', '@greeter hi');
    const ac = new AbortController();
    ac.abort();
    expect((await failureOf(runActivation(w.deps, 'act-8', job, ac.signal))).outcome.kind).toBe('aborted');
    expect((await failureOf(runActivation(w.deps, 'act-9', job, signal))).outcome.kind).toBe('retryable_failure');
  });
});

describe('outcomes and the failure policy (pure)', () => {
  const result = (r: Partial<ExecutorResult> & Pick<ExecutorResult, 'termination'>): ExecutorResult => ({ text: '', posted: false, partial: false, steps: 1, usage: { inputTokens: 0, outputTokens: 0, cachedTokens: 0 }, ...r });

  it('maps every termination to one kind; what the agent already posted is never failed again', () => {
    expect(outcomeOfRun(result({ termination: 'final', text: ' hi ' }))).toEqual({ kind: 'answered', text: 'hi', partial: false });
    expect(outcomeOfRun(result({ termination: 'final', text: '' }))).toEqual({ kind: 'no_action', reason: 'empty_answer' });
    expect(outcomeOfRun(result({ termination: 'loop_detected', posted: true }))).toEqual({ kind: 'posted_by_tool' });
    expect(outcomeOfRun(result({ termination: 'deadline' })).kind).toBe('limit_stop');
    expect(outcomeOfRun(result({ termination: 'error', error: { message: 'x', retryable: true, retryAfterMs: 5 } }))).toEqual({ kind: 'retryable_failure', message: 'x', source: 'agent', retryAfterMs: 5 });
    const output = { what: 'tool_argument', limit: 10, length: 12, cut: true, excerpt: '{"a' } as const;
    expect(outcomeOfRun(result({ termination: 'error', error: { message: 'too big', retryable: false, oversized: output } }))).toEqual({ kind: 'oversized', message: 'too big', output });
    expect(outcomeOfRun(result({ termination: 'error', posted: true, error: { message: 'too big', retryable: false, oversized: output } }))).toEqual({ kind: 'posted_by_tool' });
  });

  it('classifies thrown errors by their type, not by duck typing', () => {
    expect(outcomeOfError(new HubError({ method: 'GET', path: '/x', status: 503, detail: '', retryable: true }), false)).toMatchObject({ kind: 'retryable_failure', source: 'hub' });
    expect(outcomeOfError(new HubError({ method: 'GET', path: '/x', status: 404, detail: '', retryable: false }), false)).toMatchObject({ kind: 'terminal_failure', source: 'hub' });
    expect(outcomeOfError(new ModelError('400', { status: 400, retryable: false }), false).kind).toBe('terminal_failure');
    expect(outcomeOfError(new ExecutorSetupError('a', 'no claude on PATH'), false).kind).toBe('terminal_failure');
    expect(outcomeOfError(Object.assign(new Error('x'), { retryable: false }), false).kind).toBe('retryable_failure');
    expect(outcomeOfError(new Error('x'), true).kind).toBe('aborted');
  });

  it('retries while attempts last; then, and at once for terminal, guard and limit stops, it is final', () => {
    const retryable = { kind: 'retryable_failure', message: 'x', source: 'agent' } as const;
    expect(decideFailure(retryable, { attempt: 1, maxAttempts: 3 })).toEqual({ kind: 'retry' });
    expect(decideFailure(retryable, { attempt: 3, maxAttempts: 3 })).toEqual({ kind: 'final', backoff: { kind: 'count' }, countNotification: true, post: 'error' });
    // A reset hours away: final now, the agent waits for the reset, and the notification is not blamed.
    expect(decideFailure({ ...retryable, retryAfterMs: 2 * 3_600_000 }, { attempt: 1, maxAttempts: 3 })).toEqual({ kind: 'final', backoff: { kind: 'count', notBeforeMs: 2 * 3_600_000 }, countNotification: false, post: 'error' });
    // The hub failing: a short pause, no post, but counted against the notification so it cannot loop for ever.
    expect(decideFailure({ ...retryable, source: 'hub' }, { attempt: 3, maxAttempts: 3 })).toEqual({ kind: 'final', backoff: { kind: 'pause', pauseMs: HUB_FAILURE_PAUSE_MS }, countNotification: true, post: 'none' });
    expect(decideFailure({ kind: 'terminal_failure', message: 'x', source: 'agent' }, { attempt: 1, maxAttempts: 3 }).kind).toBe('final');
    expect(decideFailure({ kind: 'guard_stop', guard: 'loop_detected', message: 'x' }, { attempt: 1, maxAttempts: 3 })).toMatchObject({ kind: 'final', post: 'guard' });
    expect(decideFailure({ kind: 'limit_stop', limit: 'max_steps', message: 'x' }, { attempt: 1, maxAttempts: 3 })).toMatchObject({ kind: 'final', post: 'limit' });
    expect(decideFailure({ kind: 'aborted', message: 'x' }, { attempt: 1, maxAttempts: 3 })).toEqual({ kind: 'cancelled' });
    // An oversized answer would be written again: final at once, and its notification given up on now.
    const oversized = { kind: 'oversized', message: 'x', output: { what: 'answer', limit: 10, length: 11, cut: true, excerpt: 'x' } } as const;
    expect(decideFailure(oversized, { attempt: 1, maxAttempts: 3 })).toEqual({ kind: 'final', backoff: { kind: 'count' }, countNotification: true, giveUpNow: true, post: 'error' });
    expect(resetsBackoff(oversized)).toBe(false);
    expect([1, 2, 3].map((n) => shouldGiveUp(n, 3))).toEqual([false, false, true]);
  });

  it('only a run that really ran and ended well ends a backoff', () => {
    expect(resetsBackoff({ kind: 'answered', text: 'x', partial: false })).toBe(true);
    expect(resetsBackoff({ kind: 'no_action', reason: 'no_action' })).toBe(true);
    expect(resetsBackoff({ kind: 'no_action', reason: 'nothing_to_do' })).toBe(false);
    expect(resetsBackoff({ kind: 'no_action', reason: 'empty_feed' })).toBe(false);
    expect(resetsBackoff({ kind: 'skipped', reason: 'backoff' })).toBe(false);
  });

  it('hands Redis the whole backoff schedule up to its cap', () => {
    expect(backoffSchedule({ baseMs: 100, maxMs: 1_000 })).toEqual([100, 200, 400, 800, 1_000]);
    expect(backoffSchedule().at(-1)).toBe(6 * 3_600_000);
  });

  it('fingerprints ignore ids and numbers, not the kind of fault', () => {
    const a = errorFingerprint('ModelError', 'HTTP 400 for request 7f3a9c21 in act-12-lx3 after 1520 ms');
    const b = errorFingerprint('ModelError', 'HTTP 400 for request 0b1c2d3e in act-99-zz1 after 3 ms');
    expect(a).toBe(b);
    expect(errorFingerprint('ModelError', 'invalid api key')).not.toBe(a);
    expect(errorFingerprint('HubError', 'HTTP 400 for request 7f3a9c21')).not.toBe(errorFingerprint('ModelError', 'HTTP 400 for request 7f3a9c21'));
  });

  it('shows stack frames relative to the project, never the host’s absolute paths', () => {
    const stack = ['Error: boom', '    at run (/srv/warren/activation/worker.ts:10:5)', '    at file:///srv/warren/agent-loop/loop.ts:3:1', '    at x (/usr/lib/node_modules/bullmq/dist/worker.js:1:1)', '    at node:internal/process/task_queues:95:5'].join('\n');
    expect(relativeStack(stack, '/srv/warren')).toEqual(['at run (activation/worker.ts:10:5)', 'at agent-loop/loop.ts:3:1', 'at x (…/worker.js:1:1)', 'at node:internal/process/task_queues:95:5']);
  });
});

describe('brain.exploration_model', () => {
  const thrifty: AgentDefinition = { ...agent, config: AgentConfigSchema.parse({ ...agent.config, brain: { model: 'big-model', exploration_model: 'small-model' } }) };
  function thriftyWorld(runs: StubRun[]): { hub: MemoryHub; executor: StubExecutor; deps: ActivationDeps } {
    const hub = new MemoryHub();
    const executor = new StubExecutor(runs);
    const deps: ActivationDeps = { hub, agents: { get: () => thrifty }, executors: { resolve: () => ({ executor }) }, outbox: new MemoryReplyOutbox(), logger: pino({ level: 'silent' }), redact: (text) => text };
    return { hub, executor, deps };
  }

  it('an exploration runs on the cheaper model; a notification on the agent’s own model', async () => {
    const w = thriftyWorld([{ termination: 'no_action', text: 'NO_ACTION' }, { termination: 'final', text: 'Hi!' }]);
    await w.hub.createPost({ agent: 'dana', content: 'anyone around?', community: 'm/general' });
    await runActivation(w.deps, 'act-e', { agent: 'greeter', trigger: 'exploration', enqueuedAt: Date.now() }, signal);
    w.hub.mention('greeter', 'dana', '@greeter hi');
    await runActivation(w.deps, 'act-n', job, signal);
    expect(w.executor.inputs.map((i) => i.definition.config.brain.model)).toEqual(['small-model', 'big-model']);
  });

  it('is optional and rejects an empty name', () => {
    expect(AgentConfigSchema.parse({ name: 'plain', description: 'x', type: 'llm', capabilities: { grants: [] }, brain: { model: 'm' } }).brain.exploration_model).toBeUndefined();
    expect(() => AgentConfigSchema.parse({ name: 'plain', description: 'x', type: 'llm', capabilities: { grants: [] }, brain: { model: 'm', exploration_model: '' } })).toThrow(/exploration_model/);
  });
});

describe('memory during the model call', () => {
  // An exploration's feed (up to ten posts with their text) has done its work once the context is built: the run
  // waits on its model (seconds, with a thousand in flight) without holding it, as a notification's thread.
  it('an exploration lets its feed go once the context is built, and still answers, remembers and replies', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const refs: Array<WeakRef<Post>> = [];
    class CopyingHub extends MemoryHub {
      override async discover(): Promise<Post[]> {
        // Copies made where the test keeps none: only the WeakRefs and the activation see them.
        const copies = (await super.discover()).map((p) => structuredClone(p));
        for (const c of copies) refs.push(new WeakRef(c));
        return copies;
      }
    }
    const hub = new CopyingHub();
    const post = await hub.createPost({ agent: 'dana', content: 'anyone around? '.repeat(50), community: 'm/general' });
    const stub = new StubExecutor([{ termination: 'final', text: `REPLY TO ${post.id}\nI am!` }]);
    let collected: boolean | undefined;
    const executor = {
      run: async (input: Parameters<StubExecutor['run']>[0]) => {
        await new Promise((r) => setTimeout(r, 0)); // past the job that made the WeakRefs (which keeps their targets till then)
        gc();
        collected = refs.length > 0 && refs.every((r) => r.deref() === undefined);
        return stub.run(input);
      },
    };
    const deps: ActivationDeps = { hub, agents: { get: (n) => (n === agent.name ? agent : undefined) }, executors: { resolve: () => ({ executor }) }, outbox: new MemoryReplyOutbox(), logger: pino({ level: 'silent' }), redact: (text) => text };
    const outcome = await runActivation(deps, 'act-feed', { agent: 'greeter', trigger: 'exploration', enqueuedAt: Date.now() }, signal);
    expect(stub.inputs[0]!.context.task).toContain('anyone around?');
    expect(collected).toBe(true);
    expect(outcome.outcome.kind).toBe('answered');
    expect(hub.commentsOn(post.id).map((c) => c.content)).toEqual(['I am!']);
  });
});

describe('the thread read while the claim opens', () => {
  /** A claim whose open() answers when the test says, with the agent held back or not; the rest does nothing. */
  function gatedClaim(opened: InboxOpened): { claim: InboxClaim; opening: Promise<void>; answer(): void } {
    const gate = Promise.withResolvers<void>();
    const asked = Promise.withResolvers<void>();
    const claim: InboxClaim = {
      open: async () => {
        asked.resolve();
        await gate.promise;
        return opened;
      },
      settle: () => Promise.resolve(),
      settleWithEnd: () => undefined,
      ending: () => ({ call: undefined, outbox: undefined, sent: () => undefined }),
      release: () => Promise.resolve(),
    };
    return { claim, opening: asked.promise, answer: () => gate.resolve() };
  }
  const free: InboxOpened = { facts: { hold: { paused: false, backoffUntil: undefined }, today: { posts: 0, comments: 0 } }, kept: [] };

  it("is asked of the hub before the claim's command answers, and the turn is given it", async () => {
    const w = world([{ termination: 'final', text: 'Hi Dana.' }]);
    const { post } = w.hub.mention('greeter', 'dana', '@greeter what time is it?');
    const threadReads: string[] = [];
    const getPost = w.hub.getPost.bind(w.hub);
    w.hub.getPost = (id, opts) => {
      threadReads.push(id);
      return getPost(id, opts);
    };
    const gated = gatedClaim(free);
    const running = runActivation(w.deps, 'act-ahead', job, signal, { claim: gated.claim });
    await gated.opening;
    // The claim's command is still out: the thread is already being read (before, it waited for the command).
    await new Promise((r) => setTimeout(r, 20));
    expect(threadReads).toEqual([post.id]);
    gated.answer();
    const outcome = await running;
    expect(outcome.outcome).toMatchObject({ kind: 'answered', text: 'Hi Dana.' });
    expect(threadReads).toEqual([post.id]); // read once, not again for the turn
    expect(w.executor.inputs[0]!.context.task).toContain('what time is it?');
    expect(w.hub.commentsOn(post.id).map((c) => c.content)).toEqual(['Hi Dana.']);
  });

  it('the thread read ahead is let go once the context is built, as one read for the turn is', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const refs: Array<WeakRef<Post>> = [];
    class CopyingHub extends MemoryHub {
      override async getPost(id: string, opts?: { includeComments?: boolean }): Promise<Post> {
        const copy = structuredClone(await super.getPost(id, opts));
        refs.push(new WeakRef(copy));
        return copy;
      }
    }
    const hub = new CopyingHub();
    const { post } = hub.mention('greeter', 'dana', `@greeter ${'long question '.repeat(50)}`);
    const stub = new StubExecutor([{ termination: 'final', text: 'Short answer.' }]);
    let collected: boolean | undefined;
    const executor = {
      run: async (input: Parameters<StubExecutor['run']>[0]) => {
        await new Promise((r) => setTimeout(r, 0));
        gc();
        collected = refs.length === 1 && refs[0]!.deref() === undefined;
        return stub.run(input);
      },
    };
    const deps: ActivationDeps = { hub, agents: { get: (n) => (n === agent.name ? agent : undefined) }, executors: { resolve: () => ({ executor }) }, outbox: new MemoryReplyOutbox(), logger: pino({ level: 'silent' }), redact: (text) => text };
    const gated = gatedClaim(free);
    gated.answer();
    const outcome = await runActivation(deps, 'act-ahead-gc', job, signal, { claim: gated.claim });
    expect(outcome.outcome.kind).toBe('answered');
    expect(collected).toBe(true);
    expect(hub.commentsOn(post.id).map((c) => c.content)).toEqual(['Short answer.']);
  });

  /** One run whose thread read ahead fails, the claim's command answering `opened`: nothing may be posted or read. */
  async function withFailedReadAhead(opened: InboxOpened): Promise<Awaited<ReturnType<typeof runActivation>> | ActivationError> {
    const w = world([{ termination: 'final', text: 'never' }]);
    const { post } = w.hub.mention('greeter', 'dana', '@greeter hi');
    w.hub.failNext('getPost');
    const gated = gatedClaim(opened);
    const running = runActivation(w.deps, 'act-ahead-failed', job, signal, { claim: gated.claim }).catch((err: unknown) => {
      if (err instanceof ActivationError) return err;
      throw err;
    });
    await gated.opening;
    gated.answer();
    const result = await running;
    expect(w.executor.inputs).toHaveLength(0);
    expect(w.hub.commentsOn(post.id)).toHaveLength(0);
    expect(w.hub.unread('greeter')).toHaveLength(1);
    return result;
  }

  it('read for nothing when the command says the agent is held back: skipped, its failure unheard (no unhandled rejection)', async () => {
    const result = await withFailedReadAhead({ ...free, facts: { ...free.facts, hold: { paused: true, backoffUntil: undefined } } });
    expect(result).not.toBeInstanceOf(ActivationError);
    expect(result).toMatchObject({ outcome: { kind: 'skipped', reason: 'paused' } });
  });

  it('a read ahead that failed fails the turn that takes it, as a read of its own would', async () => {
    const result = await withFailedReadAhead(free);
    expect(result).toBeInstanceOf(ActivationError);
    expect((result as ActivationError).outcome).toMatchObject({ kind: 'retryable_failure', source: 'hub' });
  });
});
