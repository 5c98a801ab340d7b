// The A2A server's parts as the daemon starts them: the callers (keys read and hashed), the Redis task store, the
// news channel between daemons (a connection of its own), the ingress route and the worker's task turns.
import type { Logger } from 'pino';
import { closeRedis, connectRedis } from '../../redis/connect.ts';
import type { RedisClient } from '../../redis/scripts.ts';
import type { ActivationQueue } from '../../scheduler/activation-queue.ts';
import type { TaskInbox } from '../../scheduler/task-inbox.ts';
import type { WarrenConfig } from '../../services/config.ts';
import type { SecretSource } from '../../services/secrets.ts';
import type { AgentDefinition } from '../../store/definition.ts';
import { a2aBaseUrl } from './a2a-card.ts';
import { loadCallers } from './a2a-callers.ts';
import { A2ANews } from './a2a-news.ts';
import { A2ARoute, servesA2A } from './a2a-route.ts';
import { RedisA2ATaskStore } from './a2a-task-store.ts';
import { A2ATaskTurns } from './a2a-task-turns.ts';
import { A2AWaiting } from './a2a-waiting.ts';
import { layoutOf } from '../../redis/key-layout.ts';

/** Most A2A tasks the metrics and status read (the newest). */
export const A2A_TASKS_COUNTED = 1_000;

export interface A2AServerOptions {
  config: WarrenConfig;
  secrets: Pick<SecretSource, 'get'>;
  redis: RedisClient;
  agents: { get(name: string): AgentDefinition | undefined };
  inbox: Pick<TaskInbox, 'add' | 'settle'>;
  queue: Pick<ActivationQueue, 'enqueue'>;
  redact: (text: string) => string;
  logger: Logger;
}

export interface A2AServer {
  route: A2ARoute;
  turns: A2ATaskTurns;
  store: RedisA2ATaskStore;
  /** The scheduler's onTasksHeld: waiting tasks say why. */
  waiting: A2AWaiting;
  close(): Promise<void>;
}

/** Starts the A2A parts; a caller whose key cannot be read fails the start (CallerKeyMissing). */
export async function startA2A(o: A2AServerOptions): Promise<A2AServer> {
  const callers = loadCallers(o.config.a2a, (name) => o.secrets.get(name));
  const prefix = o.config.redis.prefix; // the fleet's (home) keys
  const store = new RedisA2ATaskStore(o.redis, prefix);
  const sub = connectRedis(o.config.redis, 'worker', o.logger);
  const news = new A2ANews(o.redis, sub, prefix, o.logger);
  try {
    await news.start();
  } catch (err) {
    await closeRedis(sub);
    throw err;
  }
  const route = new A2ARoute({ agents: o.agents, callers, store, news, inbox: o.inbox, queue: o.queue, redis: o.redis, prefix: layoutOf(o.config.redis), redact: o.redact, logger: o.logger });
  const waiting = new A2AWaiting({ store, news, logger: o.logger, serves: (agent) => servesAgent(o.agents.get(agent)) });
  return { route, turns: new A2ATaskTurns({ store, news, redact: o.redact, logger: o.logger }), store, waiting, close: () => closeRedis(sub) };
}

/** The card URL of every served agent (what the daemon logs at start). Pure. */
export function a2aCardUrls(definitions: readonly AgentDefinition[], ingressUrl: string): Array<{ agent: string; card: string }> {
  return definitions.filter(servesA2A).map((d) => ({ agent: d.name, card: `${a2aBaseUrl(ingressUrl, d.name)}.well-known/agent-card.json` }));
}

function servesAgent(def: AgentDefinition | undefined): boolean {
  return def !== undefined && servesA2A(def);
}
