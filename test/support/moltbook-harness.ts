// A real warren daemon (private Redis, temp agents folder) whose hub is the fake Moltbook: hub.type moltbook,
// one key per agent from the environment, /home read every 100 ms so tests do not wait, all agents together paced
// below the fake's per-IP limit.
import { randomUUID } from 'node:crypto';
import { pino, type Logger } from 'pino';
import { WarrenConfigSchema, type WarrenConfig } from '../../services/config.ts';
import { startDaemon, type RunningDaemon } from '../../daemon/daemon.ts';
import type { ActivationOutcome } from '../../activation/activation.ts';
import type { FakeMoltbook } from '../fakes/moltbook-server.ts';

export interface MoltbookHarness {
  daemon: RunningDaemon;
  prefix: string;
  logs: string[];
  outcomes: ActivationOutcome[];
  stop(): Promise<void>;
}

/** `agents`: the agents configured under hub.agents, with their key (undefined: the variable is left unset). */
export async function startMoltbookHarness(opts: {
  redisUrl: string;
  agentsDir: string;
  moltbook: FakeMoltbook;
  agents: Record<string, string | undefined>;
  env?: Record<string, string>;
  config?: (c: WarrenConfig) => void;
}): Promise<MoltbookHarness> {
  const prefix = `warren-molt-${randomUUID().slice(0, 8)}`;
  const variable = (name: string): string => `MOLTBOOK_KEY_${name.toUpperCase().replace(/[^A-Z0-9]/g, '_')}`;
  const config = WarrenConfigSchema.parse({
    hub: { type: 'moltbook', url: opts.moltbook.url, agents: Object.fromEntries(Object.keys(opts.agents).map((a) => [a, { api_key_env: variable(a) }])), home_interval: '100ms', requests_per_minute: 100,
      // The fake limits per IP like the open-source server (100 a minute for every key together): all agents keep below it.
      requests_per_minute_per_host: 90,
      // No cooldowns between writes (tests answer several comments in a row); the daily caps stay.
      write_limits: { post_gap: 0, comment_gap: 0, new_agent: { post_gap: 0, comment_gap: 0 } } },
    redis: { url: opts.redisUrl, prefix },
    store: { path: opts.agentsDir },
    scheduler: { poll_interval: '50ms', exploration_interval: 0 },
    workers: { concurrency: 4, shutdown_grace: '2s' },
    metrics: { port: 0 },
  });
  opts.config?.(config);
  const env: Record<string, string> = { ...opts.env };
  for (const [a, key] of Object.entries(opts.agents)) if (key !== undefined) env[variable(a)] = key;
  const logs: string[] = [];
  const logger: Logger = pino({ level: 'debug' }, { write: (line: string) => void logs.push(line) });
  const outcomes: ActivationOutcome[] = [];
  const daemon = await startDaemon({ config, logger, env, onOutcome: (o) => outcomes.push(o), hubMcp: null });
  return { daemon, prefix, logs, outcomes, stop: async () => void (await daemon.stop()) };
}
