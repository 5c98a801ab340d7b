// One served agent's A2A endpoint, through the SDK: its card (serialised with the SDK's AgentCard.toJSON, so the
// auth scheme survives) and JSON-RPC v1.0 (SendMessage, SendStreamingMessage over SSE, GetTask, ListTasks,
// CancelTask, SubscribeToTask) through the SDK's own request handler, on node:http. The route (a2a-route.ts) loads
// this file with the first request to a served agent, and the SDK's server with it: a daemon that serves no agent
// over A2A never loads either.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { A2A_VERSION_HEADER, AgentCard, formatSSEErrorEvent, formatSSEEvent, SSE_HEADERS, type CancelTaskRequest, type Task } from '@a2a-js/sdk';
import { DefaultRequestHandler, JsonRpcTransportHandler, ServerCallContext, validateVersion } from '@a2a-js/sdk/server';
import type { Logger } from 'pino';
import type { AgentDefinition } from '../../store/definition.ts';
import type { TaskInbox } from '../../scheduler/task-inbox.ts';
import type { ActivationQueue } from '../../scheduler/activation-queue.ts';
import type { RedisClient } from '../../redis/scripts.ts';
import { readCapped } from '../../local-hub/http-io.ts';
import { answer } from '../ingress/ingress-server.ts';
import { agentCard } from './a2a-card.ts';
import type { KnownCaller } from './a2a-callers.ts';
import { WarrenAgentExecutor } from './a2a-executor.ts';
import type { A2ANews } from './a2a-news.ts';
import type { RedisA2ATaskStore } from './a2a-task-store.ts';
import type { KeySpace } from '../../redis/key-layout.ts';

/** The largest JSON-RPC request body read: a task, not an upload. */
const MAX_BODY_BYTES = 1024 * 1024;

export interface A2AEndpointDeps {
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

/** The SDK's handler, with a cancel also told to the fleet: the daemon running the turn aborts it. */
class WarrenRequestHandler extends DefaultRequestHandler {
  onCancelled: (task: Task) => Promise<void> = () => Promise.resolve();
  override async cancelTask(params: CancelTaskRequest, context: ServerCallContext): Promise<Task> {
    const task = await super.cancelTask(params, context);
    await this.onCancelled(task);
    return task;
  }
}

/** The endpoint of `def` as served at `url` (the ingress's base URL); a changed definition or URL needs a new one. */
export class A2AEndpoint {
  readonly #card: AgentCard;
  readonly #transport: JsonRpcTransportHandler;
  readonly #logger: Logger;

  constructor(def: AgentDefinition, url: string, d: A2AEndpointDeps) {
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
    this.#card = card;
    this.#transport = new JsonRpcTransportHandler(handler);
    this.#logger = d.logger;
  }

  /** The card as JSON, what GET .well-known/agent-card.json answers. */
  cardJson(): unknown {
    return AgentCard.toJSON(this.#card);
  }

  /** One JSON-RPC request of `caller` (already let in): a JSON answer, or an SSE stream for a streaming method. */
  async jsonRpc(req: IncomingMessage, res: ServerResponse, caller: string): Promise<void> {
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
      validateVersion(context.requestedVersion, this.#card, 'JSONRPC');
      result = await this.#transport.handle(body, context);
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
      this.#logger.warn({ err }, 'an A2A stream failed');
      if (!res.writableEnded) res.write(formatSSEErrorEvent({ jsonrpc: '2.0', id, error: JsonRpcTransportHandler.mapToJSONRPCError(err) }));
    } finally {
      if (!res.writableEnded) res.end();
    }
  }
}

function rpcError(id: string | number | null, code: number, message: string): unknown {
  return { jsonrpc: '2.0', id, error: { code, message } };
}
