// What runs agents, built from warren.yaml: the executor registry (the in-process loop and the CLIs), warren's hub
// MCP server for CLI agents, the Moltbook hub. Loaded only by the roles that run agents (services/composition.ts
// opens them): it brings the model SDKs and the CLI executors with it.
import type { RedisClient } from '../redis/scripts.ts';
import type { Logger } from 'pino';
import type { AgentDefinition } from '../store/definition.ts';
import { MoltbookAdapter } from '../hub-client/moltbook/adapter.ts';
import type { BlueskyAdapter, BlueskyAccount } from '../hub-client/bluesky/adapter.ts';
import { readFileSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import type { AgeLimits } from '../hub-client/moltbook/write-limits.ts';
import type { ChallengeModel } from '../hub-client/moltbook/challenge-fallback.ts';
import { createCliExecutors } from '../executors/cli/cli-executors.ts';
import { programLookup } from '../executors/cli/cli-executor.ts';
import { warrenHubMcpAvailable, warrenHubMcpLauncher } from '../executors/cli/hub-mcp-launcher.ts';
import type { HubMcpLauncher } from '../executors/cli/mcp.ts';
import { LlmExecutor, llmSettings, type LlmExecutorOptions } from '../executors/llm/llm-executor.ts';
import { parseMockResponses } from '../executors/llm/scripted-model.ts';
import { hubBudget, type WarrenConfig } from './config.ts';
import { ExecutorRegistry } from './executor-registry.ts';
import { HubGateway, type HeldWrites } from './hub-gateway.ts';
import type { WriteAllowance } from '../scheduler/write-allowance.ts';
import type { CliUsers } from '../executors/cli/run-as.ts';
import type { Redactor } from './redact.ts';
import type { AgentMemory } from '../memory/agent-memory.ts';
import { effectiveGrants } from '../memory/memory-grants.ts';
import { agentMemoryBackend } from '../memory/memory-tools.ts';
import { layoutOf } from '../redis/key-layout.ts';
import { offersProposals, type ProposeAgentCall, type SpawnProposals } from '../agent-loop/propose-agent.ts';

/** Where the context pieces come from, the same for every turn of a process (names as ActivationDeps has them). */
export interface ContextSources {
  /** `workers.context_tokens`: token budget of the task part (thread, feed). */
  contextTaskTokens?: number;
  /** Whether a program is on this machine's PATH (skills' `requires_cli`). */
  cliAvailable?: (cli: string) => boolean;
  /** Posts and comments the agent already wrote today; absent or failing: the "left today" lines are left out. */
  usedToday?: (agent: string) => Promise<{ posts: number; comments: number } | undefined>;
}

export function contextSources(config: WarrenConfig, env: NodeJS.ProcessEnv, usedToday?: ContextSources['usedToday']): ContextSources {
  return { contextTaskTokens: config.workers.context_tokens, cliAvailable: programLookup(env.PATH), usedToday };
}

/**
 * Warren's hub MCP server for CLI agents, acting through a loopback gateway with a token scoped to the agent, its
 * hub grants and the activation, never the admin key. Undefined when this build has no `warren mcp hub`.
 */
export async function startHubMcp(opts: {
  hubUrl: string;
  adminKey: string;
  logger: Logger;
  writes?: WriteAllowance;
  redact?: (text: string) => string;
  /** Agents' memory: CLI agents with memory on get memory_save / memory_search through the gateway. */
  memory?: AgentMemory;
  /** Where CLI agents' writes that need approval are kept (the daemon's approval store); absent: they are refused. */
  approvals?: HeldWrites;
  /** Where CLI agents' `propose_agent` calls go (capabilities.spawning), through the gateway; absent: not offered. */
  proposals?: SpawnProposals;
}): Promise<{ launcher: HubMcpLauncher; close: () => Promise<void> } | undefined> {
  if (!warrenHubMcpAvailable()) return undefined;
  const gateway = await HubGateway.start(opts);
  const launcher = warrenHubMcpLauncher({
    credentials: (agent, audience, activationId) => {
      const memory = opts.memory ? agentMemoryBackend(opts.memory, agent, audience) : undefined;
      const grants = effectiveGrants(agent.config).filter((g) => g.startsWith('hub:') || (memory !== undefined && g.startsWith('memory:')));
      const proposals = opts.proposals && offersProposals(agent) ? opts.proposals : undefined;
      const propose = proposals ? (call: ProposeAgentCall, callId: string, idempotencyKey: string) => proposals.propose({ proposer: agent, call, callId, idempotencyKey }) : undefined;
      const t = gateway.issue(agent.name, grants, agent.config.behavior.max_duration + 60_000, agent.config.behavior, memory, { activationId, approvals: agent.config.approvals }, propose);
      return { hubUrl: gateway.url, key: t.token, grants, release: t.revoke, ...(propose ? { spawning: agent.config.capabilities.spawning?.allowed_templates ?? [] } : {}) };
    },
  });
  return { launcher, close: () => gateway.close() };
}

export interface ExecutorsOptions {
  config: WarrenConfig;
  /** Secrets are read from it by name only; the CLI executors' children get what their allow-list lets through. */
  env: NodeJS.ProcessEnv;
  /** Agent definitions by name, for delegation; looked up at run time. */
  agents: { get(name: string): AgentDefinition | undefined };
  /** Span payloads pass this redaction when `tracing.capture_payloads` is on. */
  redactor: Redactor;
  /** Starts warren's hub MCP server for CLI agents; absent: they get none. */
  hubMcp?: HubMcpLauncher;
  /** What a caller changes in the in-process loop (warren run: streaming, a cassette's fetch, the key of a replay). */
  llm?: Pick<LlmExecutorOptions, 'stream' | 'fetch' | 'secret'>;
  /** Where the hub tools' writes are admitted against the agents' limits; absent: not limited (tests, dry runs). */
  writes?: WriteAllowance;
  /** Looks a secret up by name (services/secrets.ts: environment, NAME_FILE, secrets.dir); default the environment. */
  secret?: (name: string) => string | undefined;
  /** The users CLI agents run as (services/cli-isolation.ts); absent: the daemon's own. */
  runAs?: CliUsers;
  /** Agents' memory: LLM agents with memory on get memory_save and memory_search. */
  memory?: AgentMemory;
  /** Where a switch that changes every agent's behaviour (WARREN_MOCK_RESPONSES) is announced. */
  logger?: Logger;
  /** Why CLI agents may not run here (an open Redis beside them, services/redis-exposure.ts); they are then skipped. */
  cliRefused?: string;
  /** Where LLM agents' `propose_agent` calls go (capabilities.spawning); absent: the tool is not offered. */
  proposals?: LlmExecutorOptions['proposals'];
}

/** The executor registry: the in-process loop and the four CLIs, with warren.yaml's `executors` settings. */
export function buildExecutors(opts: ExecutorsOptions): ExecutorRegistry {
  const { config, env } = opts;
  const secret = opts.secret ?? ((name: string): string | undefined => env[name]);
  const mockResponses = env.WARREN_MOCK_RESPONSES ? parseMockResponses(env.WARREN_MOCK_RESPONSES) : undefined;
  if (mockResponses) {
    opts.logger?.warn({ replies: mockResponses.length }, 'WARREN_MOCK_RESPONSES is set: every LLM agent answers from these canned replies, never from its model (a dry run; unset it to run for real)');
  }
  const llm = new LlmExecutor({
    secret,
    defaultApiBase: env.OPENAI_BASE_URL,
    mockResponses,
    ...llmSettings(config.executors.llm),
    tracePayloads: config.tracing.capture_payloads ? (text) => opts.redactor.redact(text) : undefined,
    redactToolOutput: (text) => opts.redactor.redact(text),
    agents: opts.agents,
    writes: opts.writes,
    memory: opts.memory,
    proposals: opts.proposals,
    ...opts.llm,
  });
  const cli = config.executors.cli;
  return new ExecutorRegistry(
    llm,
    createCliExecutors({
      maxConcurrent: cli.max_concurrent,
      workspacesRoot: cli.workspaces,
      binaries: cli.binaries,
      graceMs: cli.kill_grace,
      idleMs: cli.idle_timeout,
      claudeMaxRetries: cli.claude_max_retries,
      secret,
      parentEnv: env,
      hubMcp: opts.hubMcp,
      runAs: opts.runAs,
    }),
    opts.cliRefused,
  );
}

/** Moltbook as the hub: one key per configured agent; an agent whose key is not set is left out, said once. */
export function openMoltbookHub(config: WarrenConfig, secrets: { get(name: string): string | undefined }, redis: RedisClient, logger: Logger, pause: (agent: string) => Promise<void>, askModel?: ChallengeModel, communities?: (agent: string) => readonly string[]): MoltbookAdapter {
  // Asked at each use: a key in a secret file is read again at `warren reload`, so a rotated key needs no restart.
  const moltbookAgents = Object.entries(config.hub.agents).flatMap(([agent, entry]) => ('api_key_env' in entry ? [[agent, entry.api_key_env] as const] : []));
  const keys = (): Map<string, string> => {
    const now = new Map<string, string>();
    for (const [agent, api_key_env] of moltbookAgents) {
      const key = secrets.get(api_key_env);
      if (key) now.set(agent, key);
    }
    return now;
  };
  const atStart = keys();
  for (const [agent, api_key_env] of moltbookAgents) {
    if (!atStart.has(agent)) logger.warn({ agent, variable: api_key_env }, `agent ${agent} has no Moltbook key: ${api_key_env} is not set; the agent is skipped`);
  }
  return new MoltbookAdapter({ baseUrl: config.hub.url, keys, redis, prefix: layoutOf(config.redis), homeIntervalMs: config.hub.home_interval, logger, onNeedsOperator: pause, budget: hubBudget(config.budget),
    askModel,
    communities,
    writeLimits: moltbookWriteLimits(config.hub.write_limits),
    // A burst of ten seconds' worth: an activation's reads and write go through at once.
    bucket: { perMinute: config.hub.requests_per_minute, burst: Math.max(5, Math.round(config.hub.requests_per_minute / 6)) },
    ...(config.hub.requests_per_minute_per_host === undefined ? {} : { hostBucket: { perMinute: config.hub.requests_per_minute_per_host, burst: Math.max(5, Math.round(config.hub.requests_per_minute_per_host / 6)) } }) });
}

function moltbookWriteLimits(w: WarrenConfig['hub']['write_limits']): AgeLimits {
  return {
    established: { postGapMs: w.post_gap, commentGapMs: w.comment_gap, commentsPerDay: w.comments_per_day },
    newAgent: { postGapMs: w.new_agent.post_gap, commentGapMs: w.new_agent.comment_gap, commentsPerDay: w.new_agent.comments_per_day },
  };
}

/** type bluesky: each agent's account from hub.agents (handle, app password by variable or file in secrets.dir). */
export function blueskyAccounts(config: WarrenConfig, secrets: { get(name: string): string | undefined }, logger: Logger): Map<string, BlueskyAccount> {
  const accounts = new Map<string, BlueskyAccount>();
  for (const [agent, entry] of Object.entries(config.hub.agents)) {
    if (!('handle' in entry)) continue;
    let password: string | undefined;
    if (entry.password_env) password = secrets.get(entry.password_env);
    else if (entry.password_file) {
      const path = isAbsolute(entry.password_file) ? entry.password_file : join(config.secrets.dir ?? '.', entry.password_file);
      try {
        password = readFileSync(path, 'utf8').trim();
      } catch (err) {
        logger.warn({ agent, file: path, code: (err as NodeJS.ErrnoException).code }, `agent ${agent}: its Bluesky app password file cannot be read; the agent is skipped`);
      }
    }
    if (password) accounts.set(agent, { handle: entry.handle, password });
    else if (entry.password_env) logger.warn({ agent, variable: entry.password_env }, `agent ${agent} has no Bluesky app password: ${entry.password_env} is not set; the agent is skipped`);
  }
  return accounts;
}

export async function openBlueskyHub(config: WarrenConfig, accounts: ReadonlyMap<string, BlueskyAccount>, redis: RedisClient, logger: Logger): Promise<BlueskyAdapter> {
  // @atproto/api is megabytes of live heap (its lexicon tables): loaded only when the hub is Bluesky.
  const { BlueskyAdapter } = await import('../hub-client/bluesky/adapter.ts');
  return new BlueskyAdapter({
    baseUrl: config.hub.url,
    accounts,
    redis,
    prefix: layoutOf(config.redis),
    logger,
    budget: hubBudget(config.budget),
    writeRate: { perMinute: config.hub.writes_per_minute, burst: Math.max(1, Math.round(config.hub.writes_per_minute / 6)) },
    hostRate: { perMinute: config.hub.requests_per_minute_to_pds, burst: Math.max(5, Math.round(config.hub.requests_per_minute_to_pds / 6)) },
  });
}
