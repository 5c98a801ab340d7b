// Starts a real local hub and a real warren daemon (private Redis, temp agents folder) for end-to-end tests.
import { randomUUID } from 'node:crypto';
import { cpSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import type { Logger } from 'pino';
import { createLogger } from '../../daemon/logger.ts';
import { WarrenConfigSchema, type WarrenConfig } from '../../services/config.ts';
import { startDaemon, type RunningDaemon } from '../../daemon/daemon.ts';
import type { ActivationOutcome } from '../../activation/activation.ts';
import type { HubMcpLauncher } from '../../executors/cli/mcp.ts';
import { startHub, type HubFaults, type HubServerOptions, type RunningHub } from '../../local-hub/server.ts';
import { hubCaller, type HubCaller } from './hub-api.ts';

export interface Harness {
  hub: RunningHub;
  daemon: RunningDaemon;
  api: HubCaller;
  adminKey: string;
  prefix: string;
  agentsDir: string;
  logs: string[];
  outcomes: ActivationOutcome[];
  /** Registers a human-ish agent through the API and returns its key. */
  registerUser(name: string): Promise<string>;
  stop(): Promise<void>;
}

export function makeAgentsDir(agents: Record<string, { config: string; prompt?: string }>, opts: { withGreeter?: boolean } = {}): string {
  const dir = join(mkdtempSync(join(tmpdir(), 'warren-e2e-')), 'agents');
  mkdirSync(dir, { recursive: true });
  if (opts.withGreeter ?? true) cpSync('examples/agents/greeter', join(dir, 'greeter'), { recursive: true });
  for (const [name, a] of Object.entries(agents)) {
    mkdirSync(join(dir, name), { recursive: true });
    writeFileSync(join(dir, name, 'config.yaml'), a.config);
    if (a.prompt !== undefined) writeFileSync(join(dir, name, 'system-prompt.md'), a.prompt);
  }
  return dir;
}

export async function startHarness(opts: {
  redisUrl: string;
  /** Nodes of a Redis Cluster to use instead of `redisUrl` (test/support/redis-cluster.ts). */
  redisCluster?: string[];
  agentsDir: string;
  env?: Record<string, string>;
  config?: (c: WarrenConfig) => void;
  faults?: HubFaults;
  /** More local-hub settings (budget limits…). */
  hub?: Omit<HubServerOptions, 'dbPath' | 'port' | 'adminKey' | 'faults'>;
  /** The hub MCP server CLI agents get (given the hub's URL and admin key); null: none; default: the daemon's. */
  hubMcp?: ((hub: { url: string; adminKey: string }) => HubMcpLauncher) | null;
}): Promise<Harness> {
  const adminKey = `admin-${randomUUID()}`;
  const hub = await startHub({ ...opts.hub, dbPath: ':memory:', port: 0, adminKey, faults: opts.faults });
  const prefix = `warren-test-${randomUUID().slice(0, 8)}`;
  const config = WarrenConfigSchema.parse({
    hub: { url: hub.url, embedded: false },
    // The suite's private Redis takes no password: CLI agents run beside it by the documented opt-out
    // (test/security/redis-auth.test.ts is where the start check itself is tested, opt-out off).
    redis: { url: opts.redisUrl, cluster: opts.redisCluster, prefix, allow_unauthenticated: true },
    store: { path: opts.agentsDir },
    scheduler: { poll_interval: '50ms' },
    workers: { concurrency: 4, shutdown_grace: '2s' },
    metrics: { port: 0 },
    ingress: { port: 0 },
    // Beside the agents, where a warren.yaml written there (test/ops.test.ts) finds it too: never the repo's ./data.
    pauses: { file: join(opts.agentsDir, '..', 'data', 'pauses.json') },
  });
  opts.config?.(config);
  const logs: string[] = [];
  // The daemon's own logger (its output redaction included), writing into `logs`.
  const logger: Logger = createLogger({ level: 'debug', destination: new Writable({ write: (chunk: Buffer, _enc, done) => (logs.push(chunk.toString()), done()) }) });
  const outcomes: ActivationOutcome[] = [];
  const daemon = await startDaemon({
    config,
    logger,
    env: { WARREN_HUB_ADMIN_KEY: adminKey, ...opts.env },
    onOutcome: (o) => outcomes.push(o),
    hubMcp: opts.hubMcp === null ? null : opts.hubMcp?.({ url: hub.url, adminKey }),
  });
  const api = hubCaller(hub.url);
  return {
    hub,
    daemon,
    api,
    adminKey,
    prefix: config.redis.prefix,
    agentsDir: opts.agentsDir,
    logs,
    outcomes,
    async registerUser(name: string) {
      const r = await api.post<{ api_key: string }>('/agents/register', adminKey, { name, type: 'human' });
      return r.api_key;
    },
    async stop() {
      await daemon.stop();
      await hub.close();
    },
  };
}
