// A real A2A agent on loopback, built with @a2a-js/sdk (DefaultRequestHandler, InMemoryTaskStore and the SDK's
// JSON-RPC express handler), whose executor the test drives turn by turn: it sees each task, answers, fails,
// asks a question, or waits for CancelTask. Its card is served with the SDK's AgentCard.toJSON (the sample's way
// loses the auth scheme) and express's ETag, so conditional fetches are answered 304.
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { AgentCard, Role, TaskState, type Artifact, type Message, type Task } from '@a2a-js/sdk';
import { AgentEvent, DefaultRequestHandler, InMemoryTaskStore, type AgentExecutor, type ExecutionEventBus, type RequestContext } from '@a2a-js/sdk/server';
import { jsonRpcHandler, UserBuilder } from '@a2a-js/sdk/server/express';

/** One execution of the peer's executor (a new task, or a follow-up message to one), as the test sees and drives it. */
export interface Turn {
  text: string;
  messageId: string;
  taskId: string;
  contextId: string;
  followUp: boolean;
  working(note?: string): void;
  artifact(text: string, opts?: { id?: string; append?: boolean }): void;
  /** The answer as an artifact (when given), then COMPLETED. */
  complete(text?: string): void;
  fail(reason: string): void;
  reject(reason: string): void;
  /** INPUT_REQUIRED with the question. */
  ask(question: string): void;
  /** Resolves when CancelTask arrives for this turn's task (the peer has then published CANCELED). */
  readonly cancelled: Promise<void>;
}

/** What the peer's executor does with a turn; it returns (or its promise settles) when the turn is over. */
export type Behaviour = (turn: Turn) => Promise<void> | void;

export interface A2aPeer {
  /** The agent's base URL (its card is at .well-known/agent-card.json below it). */
  url: string;
  cardUrl: string;
  turns: Turn[];
  /** Task ids CancelTask reached the executor for. */
  cancels: string[];
  /** Status codes of the card's requests, in order (200, then 304 for a conditional one). */
  cardStatuses: number[];
  /** The Authorization header of every JSON-RPC request ('' when none). */
  authHeaders: string[];
  /** The A2A methods the handler was asked, in order (SendMessage, SendStreamingMessage, GetTask, …). */
  calls: string[];
  behaviour: Behaviour;
  /** Resolves with the n-th turn (1-based) once it has started. */
  turn(n: number, timeoutMs?: number): Promise<Turn>;
  /** Resolves once CancelTask has reached the executor `n` times. */
  cancelCount(n: number, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

export interface PeerOptions {
  name?: string;
  description?: string;
  skills?: Array<{ id: string; name: string; description: string; examples?: string[] }>;
  streaming?: boolean;
  /** Requests to the JSON-RPC endpoint without `Authorization: Bearer <token>` get 401 (the card stays public). */
  token?: string;
  behaviour: Behaviour;
}

const text = (value: string): Message['parts'][number] => ({ content: { $case: 'text', value }, metadata: undefined, filename: '', mediaType: 'text/plain' });

function agentMessage(taskId: string, contextId: string, value: string): Message {
  return { role: Role.ROLE_AGENT, messageId: `peer-${Math.random().toString(36).slice(2)}`, parts: [text(value)], taskId, contextId, extensions: [], metadata: {}, referenceTaskIds: [] };
}

export async function startA2aPeer(opts: PeerOptions): Promise<A2aPeer> {
  const app = express();
  const server: Server = await new Promise((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  const turnWaiters: Array<() => void> = [];
  const cancelHooks = new Map<string, () => void>();
  const peer: A2aPeer = {
    url: base,
    cardUrl: `${base}.well-known/agent-card.json`,
    turns: [],
    cancels: [],
    cardStatuses: [],
    authHeaders: [],
    calls: [],
    behaviour: opts.behaviour,
    turn: (n, timeoutMs = 20_000) => until(() => peer.turns[n - 1], turnWaiters, `turn ${n} of the A2A peer`, timeoutMs),
    cancelCount: (n, timeoutMs = 20_000) => until(() => (peer.cancels.length >= n ? true : undefined), turnWaiters, `${n} CancelTask at the A2A peer`, timeoutMs).then(() => undefined),
    close: () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      return closed;
    },
  };
  const notify = (): void => {
    for (const w of turnWaiters.splice(0)) w();
  };

  const card: AgentCard = {
    name: opts.name ?? 'Echo',
    description: opts.description ?? 'Says back what it is told.',
    supportedInterfaces: [{ url: base, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: '1.0' }],
    provider: undefined,
    version: '1.0.0',
    capabilities: { streaming: opts.streaming ?? true, pushNotifications: false, extensions: [], extendedAgentCard: false },
    securitySchemes: {},
    securityRequirements: [],
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: (opts.skills ?? [{ id: 'echo', name: 'Echo', description: 'Repeats the task back.', examples: ['say hello'] }]).map((s) => ({ ...s, examples: s.examples ?? [], tags: [], inputModes: [], outputModes: [], securityRequirements: [] })),
    signatures: [],
  };

  const executor: AgentExecutor = {
    execute: async (ctx: RequestContext, bus: ExecutionEventBus) => {
      const { taskId, contextId } = ctx;
      const message = ctx.userMessage;
      const publishStatus = (state: TaskState, note?: string): void =>
        bus.publish(AgentEvent.statusUpdate({ taskId, contextId, status: { state, timestamp: new Date().toISOString(), message: note ? agentMessage(taskId, contextId, note) : undefined }, metadata: {} }));
      const snapshot: Task = ctx.task ?? { id: taskId, contextId, status: { state: TaskState.TASK_STATE_SUBMITTED, timestamp: new Date().toISOString(), message: undefined }, artifacts: [], history: [message], metadata: {} };
      bus.publish(AgentEvent.task(snapshot));
      const cancelled = new Promise<void>((resolve) => cancelHooks.set(taskId, resolve));
      let artifacts = 0;
      const turn: Turn = {
        text: (message.parts ?? []).map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join(''),
        messageId: message.messageId,
        taskId,
        contextId,
        followUp: ctx.task !== undefined,
        working: (note) => publishStatus(TaskState.TASK_STATE_WORKING, note),
        artifact: (value, o = {}) => {
          const artifact: Artifact = { artifactId: o.id ?? `answer-${++artifacts}`, name: 'answer', description: '', parts: [text(value)], metadata: {}, extensions: [] };
          bus.publish(AgentEvent.artifactUpdate({ taskId, contextId, artifact, append: o.append ?? false, lastChunk: true, metadata: {} }));
        },
        complete: (value) => {
          if (value !== undefined) turn.artifact(value);
          publishStatus(TaskState.TASK_STATE_COMPLETED);
        },
        fail: (reason) => publishStatus(TaskState.TASK_STATE_FAILED, reason),
        reject: (reason) => publishStatus(TaskState.TASK_STATE_REJECTED, reason),
        ask: (question) => publishStatus(TaskState.TASK_STATE_INPUT_REQUIRED, question),
        cancelled,
      };
      peer.turns.push(turn);
      notify();
      try {
        await peer.behaviour(turn);
      } finally {
        cancelHooks.delete(taskId);
      }
    },
    // Cooperative, as A2A asks: the executor learns of it and the task ends CANCELED.
    cancelTask: (taskId, bus) => {
      peer.cancels.push(taskId);
      const task = peer.turns.find((t) => t.taskId === taskId);
      bus.publish(AgentEvent.statusUpdate({ taskId, contextId: task?.contextId ?? '', status: { state: TaskState.TASK_STATE_CANCELED, timestamp: new Date().toISOString(), message: undefined }, metadata: {} }));
      cancelHooks.get(taskId)?.();
      notify();
      return Promise.resolve();
    },
  };
  const requestHandler = new RecordingHandler(peer.calls, card, new InMemoryTaskStore(), executor);

  app.get('/.well-known/agent-card.json', (_req, res) => {
    res.on('finish', () => peer.cardStatuses.push(res.statusCode));
    res.json(AgentCard.toJSON(card));
  });
  app.use((req, res, next) => {
    const auth = req.headers.authorization ?? '';
    peer.authHeaders.push(auth);
    if (opts.token && auth !== `Bearer ${opts.token}`) {
      res.status(401).json({ error: 'unauthorized' });
      return;
    }
    next();
  });
  app.use(jsonRpcHandler({ requestHandler, userBuilder: UserBuilder.noAuthentication }));
  return peer;
}

/** The SDK's own handler, noting which method each request reached. */
class RecordingHandler extends DefaultRequestHandler {
  readonly #calls: string[];
  constructor(calls: string[], ...args: ConstructorParameters<typeof DefaultRequestHandler>) {
    super(...args);
    this.#calls = calls;
  }
  override sendMessage(...a: Parameters<DefaultRequestHandler['sendMessage']>): ReturnType<DefaultRequestHandler['sendMessage']> {
    this.#calls.push('SendMessage');
    return super.sendMessage(...a);
  }
  override sendMessageStream(...a: Parameters<DefaultRequestHandler['sendMessageStream']>): ReturnType<DefaultRequestHandler['sendMessageStream']> {
    this.#calls.push('SendStreamingMessage');
    return super.sendMessageStream(...a);
  }
  override getTask(...a: Parameters<DefaultRequestHandler['getTask']>): ReturnType<DefaultRequestHandler['getTask']> {
    this.#calls.push('GetTask');
    return super.getTask(...a);
  }
  override listTasks(...a: Parameters<DefaultRequestHandler['listTasks']>): ReturnType<DefaultRequestHandler['listTasks']> {
    this.#calls.push('ListTasks');
    return super.listTasks(...a);
  }
  override cancelTask(...a: Parameters<DefaultRequestHandler['cancelTask']>): ReturnType<DefaultRequestHandler['cancelTask']> {
    this.#calls.push('CancelTask');
    return super.cancelTask(...a);
  }
  override resubscribe(...a: Parameters<DefaultRequestHandler['resubscribe']>): ReturnType<DefaultRequestHandler['resubscribe']> {
    this.#calls.push('SubscribeToTask');
    return super.resubscribe(...a);
  }
}

function until<T>(probe: () => T | undefined, waiters: Array<() => void>, what: string, timeoutMs: number): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)), timeoutMs);
    const check = (): void => {
      const v = probe();
      if (v !== undefined) {
        clearTimeout(timer);
        resolve(v);
      } else waiters.push(check);
    };
    check();
  });
}
