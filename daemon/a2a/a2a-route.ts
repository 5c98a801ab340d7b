// The A2A endpoint of every agent that serves it (`a2a.serve: true`), on the daemon's ingress under /a2a/<agent>/:
// the card at .well-known/agent-card.json (serialised with the SDK's AgentCard.toJSON, so the auth scheme survives),
// and JSON-RPC v1.0 (SendMessage, SendStreamingMessage over SSE, GetTask, ListTasks, CancelTask, SubscribeToTask)
// through the SDK's own request handler, on node:http. Callers are checked first (a2a-callers.ts).
import type { IncomingMessage, ServerResponse } from 'node:http';
import { A2A_VERSION_HEADER, AgentCard, formatSSEErrorEvent, formatSSEEvent, SSE_HEADERS, type CancelTaskRequest, type Task } from '@a2a-js/sdk';
import { DefaultRequestHandler, JsonRpcTransportHandler, ServerCallContext, validateVersion } from '@a2a-js/sdk/server';
import type { Logger } from 'pino';
import type { AgentDefinition } from '../../store/definition.ts';
import type { TaskInbox } from '../../scheduler/task-inbox.ts';
import type { ActivationQueue } from '../../scheduler/activation-queue.ts';
import type { RedisClient } from '../../redis/scripts.ts';
import { readCapped } from '../../local-hub/http-io.ts';
import { answer, type IngressRoute } from '../ingress/ingress-server.ts';
import { agentCard } from './a2a-card.ts';
import { checkCaller, type KnownCaller } from './a2a-callers.ts';
import { WarrenAgentExecutor } from './a2a-executor.ts';
import type { A2ANews } from './a2a-news.ts';
import type { RedisA2ATaskStore } from './a2a-task-store.ts';
import type { KeySpace } from '../../redis/key-layout.ts';

/** The largest JSON-RPC request body read: a task, not an upload. */
const MAX_BODY_BYTES = 1024 * 1024;
const CARD_PATH = '.well-known/agent-card.json';

export interface A2ARouteDeps {
  agents: { get(name: string): AgentDefinition | undefined };
  callers: readonly KnownCaller[];
  store: RedisA2ATaskStore;
  news: A2ANews;
  inbox: Pick<TaskInbox, 'add' | 'settle'>;
  queue: Pick<ActivationQueue, 'enqueue'>;
  redis: RedisClient;
  prefix: KeySpace;
  redact: (text: string) => string;
  logger: Logger;
}

/** Whether `def` is served over A2A. */
export function servesA2A(def: AgentDefinition): boolean {
  return def.config.a2a?.serve === true;
}

/** The SDK's handler, with a cancel also told to the fleet: the daemon running the turn aborts it. */
class WarrenRequestHandler extends DefaultRequestHandler {
  onCancelled: (task: Task) => Promise<void> = () => Promise.resolve();
  override async cancelTask(params: CancelTaskRequest, context: ServerCallContext): Promise<Task> {
    const task = await super.cancelTask(params, context);
    await this.onCancelled(task);
    return task;
  }
}

interface Served {
  key: string;
  transport: JsonRpcTransportHandler;
  card: AgentCard;
}

export class A2ARoute implements IngressRoute {
  readonly name = 'a2a';
  readonly prefix = '/a2a/';
  readonly #d: A2ARouteDeps;
  /** Per agent, the SDK's handler for its current definition (rebuilt when the definition or URL changes). */
  readonly #served = new Map<string, Served>();

  constructor(deps: A2ARouteDeps) {
    this.#d = deps;
  }

  wanted(definitions: readonly AgentDefinition[]): boolean {
    return definitions.some(servesA2A);
  }

  async handle(req: IncomingMessage, res: ServerResponse, rest: string, url: string): Promise<void> {
    const [agent = '', ...tail] = rest.split('/');
    const path = tail.join('/');
    const def = this.#d.agents.get(decodeURIComponent(agent));
    if (!def || !servesA2A(def)) return answer(res, 404, { error: 'not_found', detail: `no agent named ${agent.slice(0, 60)} is served over A2A here (a2a.serve: true in its config.yaml)` });
    const check = checkCaller(this.#d.callers, req.headers.authorization, req.socket.remoteAddress);
    if (!check.ok) return answer(res, 401, { error: 'unauthorized', detail: check.reason }, { 'www-authenticate': 'Bearer realm="warren a2a"' });
    const served = this.#servedFor(def, url);
    if (path === CARD_PATH && req.method === 'GET') return answer(res, 200, AgentCard.toJSON(served.card));
    if (path !== '' || req.method !== 'POST') return answer(res, 404, { error: 'not_found', detail: `POST JSON-RPC to /a2a/${def.name}/, GET the card at /a2a/${def.name}/${CARD_PATH}` });
    await this.#jsonRpc(req, res, served, check.caller);
  }

  #servedFor(def: AgentDefinition, url: string): Served {
    const key = `${url}|${def.hash ?? JSON.stringify(def.config)}`;
    const had = this.#served.get(def.name);
    if (had?.key === key) return had;
    const d = this.#d;
    const card = agentCard(def, url, d.callers.length > 0);
    const executor = new WarrenAgentExecutor({ agent: def.name, maxDailyTasks: def.config.a2a?.max_daily_tasks ?? 0, quietHours: def.config.behavior.quiet_hours, store: d.store, news: d.news, inbox: d.inbox, queue: d.queue, redis: d.redis, prefix: d.prefix, redact: d.redact, logger: d.logger });
    const handler = new WarrenRequestHandler(card, d.store, executor);
    handler.onCancelled = async (task) => {
      // Not run if it still waits; aborted where it runs (a2a-task-turns.ts hears the cancel).
      await d.inbox.settle(def.name, `a2a:${task.id}`);
      await d.news.publish({ kind: 'cancel', taskId: task.id });
      await d.news.publish({ kind: 'changed', taskId: task.id });
      d.logger.info({ agent: def.name, task: task.id }, 'A2A task cancelled');
    };
    const served = { key, transport: new JsonRpcTransportHandler(handler), card };
    this.#served.set(def.name, served);
    return served;
  }

  async #jsonRpc(req: IncomingMessage, res: ServerResponse, served: Served, caller: string): Promise<void> {
    const type = (req.headers['content-type'] ?? 'application/json').split(';', 1)[0]!.trim().toLowerCase();
    if (type !== 'application/json' && type !== 'application/a2a+json') return answer(res, 415, rpcError(null, -32005, `expected content-type application/json, got ${type.slice(0, 60)}`));
    const capped = await readCapped(req, MAX_BODY_BYTES);
    if (capped === 'too_large') return answer(res, 413, rpcError(null, -32600, `the request body is over ${MAX_BODY_BYTES} bytes`), { connection: 'close' });
    const text = capped.toString('utf8');
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(text) as Record<string, unknown>;
    } catch {
      return answer(res, 200, rpcError(null, -32700, 'the request body is not JSON'));
    }
    const id = typeof body.id === 'string' || typeof body.id === 'number' ? body.id : null;
    const versionHeader = req.headers[A2A_VERSION_HEADER.toLowerCase()];
    const context = new ServerCallContext({ user: { isAuthenticated: true, userName: caller }, requestedVersion: typeof versionHeader === 'string' ? versionHeader : undefined });
    let result: Awaited<ReturnType<JsonRpcTransportHandler['handle']>>;
    try {
      validateVersion(context.requestedVersion, served.card, 'JSONRPC');
      result = await served.transport.handle(body, context);
    } catch (err) {
      return answer(res, 200, { jsonrpc: '2.0', id, error: JsonRpcTransportHandler.mapToJSONRPCError(err) });
    }
    if (!(Symbol.asyncIterator in result)) return answer(res, 200, result);
    // A stream: the first event (or the error before it) decides between an SSE answer and a JSON one.
    const events = result[Symbol.asyncIterator]();
    let first: IteratorResult<unknown>;
    try {
      first = await events.next();
    } catch (err) {
      return answer(res, 200, { jsonrpc: '2.0', id, error: JsonRpcTransportHandler.mapToJSONRPCError(err) });
    }
    res.writeHead(200, SSE_HEADERS);
    // A caller that hangs up stops the stream here, not the task (CancelTask does that).
    const gone = new Promise<void>((resolve) => res.once('close', resolve));
    try {
      for (let next = first; !next.done; ) {
        res.write(formatSSEEvent(next.value));
        const step = await Promise.race([events.next(), gone.then(() => undefined)]);
        if (!step) {
          void events.return?.(undefined);
          break;
        }
        next = step;
      }
    } catch (err) {
      this.#d.logger.warn({ err }, 'an A2A stream failed');
      if (!res.writableEnded) res.write(formatSSEErrorEvent({ jsonrpc: '2.0', id, error: JsonRpcTransportHandler.mapToJSONRPCError(err) }));
    } finally {
      if (!res.writableEnded) res.end();
    }
  }
}

function rpcError(id: string | number | null, code: number, message: string): unknown {
  return { jsonrpc: '2.0', id, error: { code, message } };
}

