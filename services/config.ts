// warren.yaml: where the hub, Redis and the agent definitions are, and how much to run at once.
// Validated like agent configs (file:line:column), with environment overrides applied after.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { z } from 'zod';
import { parseByteSize } from '../store/byte-size.ts';
import { parseDuration } from '../store/duration.ts';
import { DefinitionError } from '../store/problems.ts';
import { parseS3Url } from '../store/s3-location.ts';
import { validateYaml } from '../store/yaml-validate.ts';
import { isPostgresUrl } from '../memory/store-location.ts';
import { keyPrefix } from '../redis/keys.ts';
import { MAX_SHARDS } from '../redis/key-layout.ts';
import { refuseReadableInlineCredentials, resolveRedisCredentials } from './redis-credentials.ts';
import type { BudgetConfig } from '../local-hub/budget-rules.ts';

const durationMs = z.union([z.string(), z.number()]).transform((v, ctx) => {
  const ms = parseDuration(v);
  if (ms === undefined) {
    ctx.addIssue({ code: 'custom', message: 'expected a duration like 500ms, 2s or 1m' });
    return z.NEVER;
  }
  return ms;
});

const byteSize = z.union([z.string(), z.number()]).transform((v, ctx) => {
  const bytes = parseByteSize(v);
  if (bytes === undefined || bytes < 1024) {
    ctx.addIssue({ code: 'custom', message: 'expected a size of at least 1KiB, like 128KiB or 8MiB' });
    return z.NEVER;
  }
  return bytes;
});

const envName = z.string().regex(/^[A-Z][A-Z0-9_]*$/, 'expected the NAME of an environment variable, like AWS_ACCESS_KEY_ID');

/** type bluesky: an agent's account, its handle and its app password (by variable, or a file in secrets.dir). */
const BlueskyAccountSchema = z
  .strictObject({ handle: z.string().min(3), password_env: envName.optional(), password_file: z.string().min(1).optional() })
  .refine((a) => (a.password_env === undefined) !== (a.password_file === undefined), 'expected one of password_env (a variable) or password_file (a file in secrets.dir)');

export const WarrenConfigSchema = z.strictObject({
  hub: z
    .strictObject({
      /** `warren`: warren's own hub (local or embedded); `moltbook`: Moltbook's public API, each agent with its own key. */
      type: z.enum(['warren', 'moltbook', 'bluesky']).default('warren'),
      url: z.url().default('http://127.0.0.1:7070'),
      /** Serve the local hub in this process (the one-command demo). */
      embedded: z.boolean().default(false),
      /** Address the local hub binds to; loopback unless deliberately exposed (e.g. in a container). */
      host: z.string().default('127.0.0.1'),
      port: z.number().int().min(0).max(65_535).default(7070),
      db: z.string().default('./data/hub.sqlite'),
      /** Who may open the local hub's watch page: this machine (`loopback`), anyone with the printed link (`any`), nobody. */
      watch: z.enum(['loopback', 'any', 'off']).default('loopback'),
      /** Networks whose clients count as this machine for the watch page, e.g. a container bridge (172.16.0.0/12). */
      watch_networks: z.array(z.string().regex(/^[0-9a-fA-F:.]+\/\d{1,3}$/, 'expected a network such as 172.16.0.0/12')).default([]),
      /** Name of the env var holding the hub's admin (service) key. */
      admin_key_env: z.string().default('WARREN_HUB_ADMIN_KEY'),
      /** Register the loaded agents on the hub when they are missing there. */
      register_agents: z.boolean().default(true),
      /** type moltbook: each agent's key, by the NAME of its variable (or NAME_FILE, or a file in secrets.dir). */
      agents: z.record(z.string(), z.union([z.strictObject({ api_key_env: envName }), BlueskyAccountSchema])).default({}),
      /** type moltbook: how often each agent's /home is read for new work (jittered). */
      home_interval: durationMs.default(60_000),
      /** type moltbook: requests per minute and key warren allows itself (Moltbook refuses more than 100). */
      requests_per_minute: z.number().int().min(1).max(100).default(60),
      /** type moltbook: requests per minute of all agents together on the hub's host, shared in Redis by every daemon (unset: not paced as a whole). The open-source server allows 100 a minute per IP. */
      requests_per_minute_per_host: z.number().int().min(1).optional(),
      /** type moltbook: Moltbook's posting limits as warren keeps them locally (defaults: the published ones; `new_agent`: under 24 h). */
      write_limits: z
        .strictObject({
          post_gap: durationMs.default(30 * 60_000),
          comment_gap: durationMs.default(20_000),
          comments_per_day: z.number().int().min(0).default(50),
          new_agent: z.strictObject({ post_gap: durationMs.default(2 * 3_600_000), comment_gap: durationMs.default(60_000), comments_per_day: z.number().int().min(0).default(20) }).prefault({}),
        })
        .prefault({}),
      /** type bluesky: posts (records) per minute each account creates, shared in Redis by every daemon (the PDS allows 5000 points an hour, 3 a post). */
      writes_per_minute: z.number().int().min(1).max(100).default(25),
      /** type bluesky: requests per minute to the PDS's host, all accounts together (the PDS allows 3000 per 5 minutes per IP). */
      requests_per_minute_to_pds: z.number().int().min(1).max(600).default(500),
    })
    .refine((h) => !(h.type === 'moltbook' && h.embedded), { message: 'hub.embedded serves warren\'s own hub; it cannot be combined with hub.type moltbook', path: ['embedded'] })
    .refine((h) => !(h.type === 'bluesky' && h.embedded), { message: 'hub.embedded serves warren\'s own hub; it cannot be combined with hub.type bluesky', path: ['embedded'] })
    .prefault({}),
  redis: z
    .strictObject({
      url: z.string().default('redis://127.0.0.1:6379'),
      /** Redis Cluster: the URLs of some of its nodes (the rest are discovered); when set, `url` and REDIS_URL are not used. */
      cluster: z.array(z.url({ protocol: /^rediss?$/, error: 'expected a redis:// or rediss:// URL of a cluster node' })).min(1).optional(),
      /** Every key starts with it; on a cluster it is used as a hash tag (`{warren}`), see redis/keys.ts. */
      prefix: z.string().min(1).default('warren'),
      /** The fleet spread over this many shards, each its own hash tag and queue (README "Shards"; changing it needs `warren shards migrate`). */
      shards: z.number().int().min(1).max(MAX_SHARDS).default(1),
      /** The shards this daemon schedules and runs (indexes from 0); default: all. */
      work_shards: z.array(z.number().int().min(0)).min(1).optional(),
      // Credentials and TLS (README: Security model): CLI agents must not reach a Redis that takes commands without them.
      /** The ACL user warren logs in as (Redis 6+); without it, `default`. */
      username: z.string().min(1).optional(),
      /** NAME of the variable holding the Redis password (NAME_FILE and secrets.dir work as for every secret). */
      password_env: envName.optional(),
      /** A file holding the Redis password (relative to warren.yaml); readable by the daemon's user only. */
      password_file: z.string().min(1).optional(),
      /** Refused: a password in warren.yaml is one more copy for anyone who can read the file. */
      password: z.unknown().refine(() => false, 'a Redis password is not written in warren.yaml: name its variable (redis.password_env) or its file (redis.password_file)').optional(),
      /** TLS to Redis (also on with a rediss:// URL): files relative to warren.yaml. */
      tls: z
        .strictObject({
          ca_file: z.string().min(1).optional(),
          cert_file: z.string().min(1).optional(),
          key_file: z.string().min(1).optional(),
          servername: z.string().min(1).optional(),
          reject_unauthorized: z.boolean().optional(),
        })
        .optional(),
      /** Run CLI agents as their own users even when Redis answers without credentials (single-user development only). */
      allow_unauthenticated: z.boolean().default(false),
    })
    .superRefine((r, ctx) => {
      for (const [i, shard] of (r.work_shards ?? []).entries()) {
        if (shard >= r.shards) ctx.addIssue({ code: 'custom', path: ['work_shards', i], message: `shard ${shard} does not exist: redis.shards is ${r.shards} (shards are numbered 0 to ${r.shards - 1})` });
        else if (r.work_shards!.indexOf(shard) !== i) ctx.addIssue({ code: 'custom', path: ['work_shards', i], message: `shard ${shard} is listed twice` });
      }
    })
    // `password` is filled at load from password_env / password_file (services/redis-credentials.ts), never from the file.
    .transform(({ password: _never, ...r }) => ({ ...r, prefix: keyPrefix(r.prefix, r.cluster !== undefined), password: undefined as string | undefined }))
    .prefault({}),
  store: z
    .strictObject({
      /** `local`: a folder; `s3`: an S3-compatible bucket (S3, R2, MinIO) in the same layout. */
      type: z.enum(['local', 's3']).default('local'),
      /** The folder holding `agents/`, `skills/`, `prompts/` (type local); `warren init agent` writes here. */
      path: z.string().default('./examples'),
      /** More folders in the same layout, loaded before `path` (the repo's demo: ./examples); WARREN_STORE clears them. */
      include: z.array(z.string().min(1)).default([]),
      /** `s3://bucket/prefix` (type s3). */
      url: z.string().refine((u) => parseS3Url(u) !== undefined, 'expected s3://bucket/prefix').optional(),
      /** S3 endpoint; R2: https://<account>.r2.cloudflarestorage.com, MinIO: http://host:9000; unset: AWS. */
      endpoint: z.url().optional(),
      region: z.string().default('auto'),
      force_path_style: z.boolean().default(true),
      /** NAMES of the environment variables holding the credentials, never the credentials. */
      access_key_id_env: envName.default('AWS_ACCESS_KEY_ID'),
      secret_access_key_env: envName.default('AWS_SECRET_ACCESS_KEY'),
      /** How long skills and prompts are trusted before ETag revalidation (agent files use the agent's cache_ttl). */
      cache_ttl: durationMs.default(300_000),
      /** How often the bucket listing is compared for changes (type s3). */
      poll_interval: durationMs.default(30_000),
      /** Reload on changes (fs.watch for a folder, listing poll for a bucket). */
      watch: z.boolean().default(true),
      /**
       * A folder store (with `watch`): how often its own files are compared (inode, size, times) as a safety net
       * beside fs.watch; a change is loaded within about this long. 0 turns the check off.
       */
      check_interval: durationMs.default(2_000),
    })
    .refine((s) => s.type !== 's3' || s.url !== undefined, { message: 'store.type s3 needs store.url (s3://bucket/prefix)', path: ['url'] })
    .prefault({}),
  scheduler: z
    .strictObject({
      poll_interval: durationMs.default(1_000),
      /** Hold intake on the hub's long-poll up to this long (0 = plain polling only). */
      long_poll_timeout: durationMs.default(30_000),
      /** Leader lease lifetime; a dead leader is replaced within two of these. */
      lease_ttl: durationMs.default(10_000),
      /** How often idle worker capacity is offered to the stalest agents with discovery on (0 = never). */
      exploration_interval: durationMs.default(30_000),
      /** An agent explores at most this often (discovery.frequency `staleness`). */
      min_staleness: durationMs.default(900_000),
      /** How long a budget-health answer is trusted before the hub is asked again. */
      budget_ttl: durationMs.default(30_000),
      /** An agent's wait after its first terminal failure; doubled for each further one (README: When things fail). */
      failure_backoff: durationMs.default(600_000),
      /** The longest such wait. */
      failure_backoff_max: durationMs.default(6 * 3_600_000),
    })
    .prefault({}),
  workers: z
    .strictObject({
      concurrency: z.number().int().min(1).max(10_000).default(50),
      /** Token budget of an activation's task (thread or exploration feed); longer threads keep the root and newest comments. */
      context_tokens: z.number().int().min(500).max(1_000_000).default(8_000),
      /** At shutdown, running activations get this long to finish before they are aborted. */
      shutdown_grace: durationMs.default(30_000),
      /** A worker's claim on a running job; renewed every half of it. A dead worker's jobs return after it lapses. */
      lock_duration: durationMs.default(30_000),
      /** How often lapsed claims are looked for (the stalled-job check). */
      stalled_interval: durationMs.default(30_000),
      /** Terminal failures on one notification before it is given up on (marked read, recorded as abandoned). */
      give_up_after: z.number().int().min(1).max(100).default(3),
    })
    .prefault({}),
  executors: z
    .strictObject({
      llm: z
        .strictObject({
          stream: z.boolean().default(false),
          /** USD per 1M tokens by model (prefix match); merged over the built-in table. */
          prices: z.record(z.string(), z.strictObject({ input: z.number().nonnegative(), output: z.number().nonnegative() })).default({}),
          /** Context window in tokens by model; older turns are compacted before it is reached (default 128,000). */
          context_windows: z.record(z.string(), z.number().int().min(1000)).default({}),
          /** Models without native tool calling: `brain.tool_mode: auto` uses text mode for them. */
          models_without_tools: z.array(z.string()).default([]),
          /** Characters of one tool result the model sees. */
          tool_output_cap: z.number().int().min(1000).default(16_000),
          tool_timeout: durationMs.default(60_000),
          /** One model HTTP call; a timed-out call is retried like a network error. */
          model_timeout: durationMs.default(120_000),
          /** One step (its model call and tool calls); 0 = no limit beyond behavior.max_duration. */
          step_timeout: durationMs.default(0),
        })
        .prefault({}),
      /** Coding-agent CLIs run as supervised subprocesses (executors/cli/). */
      cli: z
        .strictObject({
          /** CLI activations at once in this process, independently of LLM ones (each is a heavy process tree). */
          max_concurrent: z.number().int().min(1).max(256).default(2),
          /** Parent of the per-agent working directories (workspaces/<agent>/). */
          workspaces: z.string().default('./workspaces'),
          /** Between SIGTERM and SIGKILL to a CLI's process group. */
          kill_grace: durationMs.default(5_000),
          /** A CLI silent this long is killed (goose goes quiet during long tool arguments: be generous). */
          idle_timeout: durationMs.default(180_000),
          /** Executable per CLI, a path or a name on PATH (default: claude, goose, aider, opencode). */
          binaries: z.strictObject({ 'claude-code': z.string().min(1).optional(), goose: z.string().min(1).optional(), aider: z.string().min(1).optional(), opencode: z.string().min(1).optional() }).prefault({}),
          /** CLAUDE_CODE_MAX_RETRIES: bounded, since an unbounded claude retried a 401 for over a minute. */
          claude_max_retries: z.number().int().min(0).max(10).default(2),
          /**
           * The user CLI agents run as when the daemon runs as root, so they cannot read the daemon's environment
           * (/proc/<pid>/environ) or its secret files; created on demand when missing. `none`: the daemon's own user.
           */
          run_as: z.string().regex(/^[a-z_][a-z0-9_-]{0,31}$/, 'expected a user name (lowercase, at most 32 characters) or none').default('warren-agent'),
          /** Each agent gets its own user, `<run_as>-<agent>`: one CLI agent cannot read another's key or workspace. */
          run_as_per_agent: z.boolean().default(true),
        })
        .prefault({}),
    })
    .prefault({}),
  /**
   * Spend limits the embedded hub (and `warren hub`) applies: USD per agent per UTC day and month (0 = unlimited),
   * with per-agent overrides; the budget-health status turns warning/throttle/critical at these percentages.
   */
  budget: z
    .strictObject({
      daily_usd: z.number().nonnegative().max(1e6).default(0),
      monthly_usd: z.number().nonnegative().max(1e6).default(0),
      agents: z.record(z.string(), z.strictObject({ daily_usd: z.number().nonnegative().max(1e6).optional(), monthly_usd: z.number().nonnegative().max(1e6).optional() })).default({}),
      /** All agents together, per UTC day and month (0 = unlimited): past it, no agent runs. */
      fleet: z.strictObject({ daily_usd: z.number().nonnegative().max(1e6).default(0), monthly_usd: z.number().nonnegative().max(1e6).default(0) }).prefault({}),
      warn_pct: z.number().min(1).max(100).default(80),
      throttle_pct: z.number().min(1).max(100).default(90),
      critical_pct: z.number().min(1).max(1000).default(100),
    })
    .prefault({}),
  /** Where secrets come from besides the environment (services/secrets.ts): a file per variable name. */
  /** What Redis keeps of the activation records (`warren logs`, `status`): per list, the oldest go first. */
  records: z
    .strictObject({
      /** Records per agent. */
      per_agent: z.number().int().min(1).max(10_000).default(100),
      /** Bytes of one agent's records (the newest record always stays, up to 64 KiB). */
      per_agent_bytes: byteSize.default(128 * 1024),
      /** Records of all agents together (`warren logs` without --agent). */
      overall: z.number().int().min(1).max(100_000).default(1_000),
      overall_bytes: byteSize.default(8 * 1024 * 1024),
      /** Records older than this go, and an agent's history expires this long after its last run. */
      max_age: durationMs.refine((ms) => ms >= 60_000, 'expected at least 1m').default(7 * 24 * 3_600_000),
    })
    .prefault({}),
  secrets: z.strictObject({ dir: z.string().min(1).optional() }).prefault({}),
  // operator-b (issue 27.6): an operator's `warren pause` outlives Redis (README "Operations").
  /**
   * Where `warren pause` keeps the paused agents (mode 0600), re-applied to Redis at start and on every reconnect.
   * A warren.yaml gets `./data/pauses.json` beside it when unset; a config built in code (tests, benchmarks) none.
   */
  pauses: z.strictObject({ file: z.string().min(1).optional() }).prefault({}),
  /** OpenTelemetry traces (activation → invoke_agent → step → chat / execute_tool), exported over OTLP/HTTP. */
  tracing: z
    .strictObject({
      enabled: z.boolean().default(false),
      /** The collector's OTLP/HTTP traces endpoint. */
      endpoint: z.url().default('http://127.0.0.1:4318/v1/traces'),
      service_name: z.string().min(1).default('warren'),
      /** Put prompts, answers and tool payloads in spans (known secrets redacted). Off: only names, ids, counts. */
      capture_payloads: z.boolean().default(false),
    })
    .prefault({}),
  /** Agent memory (memory/, README "Memory"): where entries are kept, and the embeddings endpoint for embedding_search. */
  memory: z
    .strictObject({
      /** A SQLite file (relative to warren.yaml; created when an agent first remembers), or postgres://… shared by several daemons. */
      store: z.string().min(1).default('./data/memory.sqlite'),
      /** An OpenAI-compatible /v1/embeddings endpoint; without it embedding_search recalls by keyword. */
      embeddings: z.strictObject({ api_base: z.url(), model: z.string().min(1), api_key_env: envName.optional() }).optional(),
    })
    .prefault({}),
  /**
   * Where the outside world reaches the agents: webhooks (`/hooks/<agent>/<name>`) and A2A (`/a2a/<agent>/`).
   * Loopback unless deliberately exposed. `auto` opens it once a loaded agent has webhooks or serves A2A.
   */
  ingress: z
    .strictObject({
      enabled: z.union([z.boolean(), z.literal('auto')]).default('auto'),
      host: z.string().default('127.0.0.1'),
      port: z.number().int().min(0).max(65_535).default(7071),
    })
    .prefault({}),
  /**
   * Who may send tasks to the agents that serve A2A: each caller's bearer key from a variable or a file (hashed once
   * read). With none, only loopback callers are served, without a key.
   */
  a2a: z
    .strictObject({
      callers: z
        .array(
          z
            .strictObject({ name: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/, 'expected letters, digits, dots, dashes and underscores'), key_env: envName.optional(), key_file: z.string().min(1).optional() })
            .refine((c) => (c.key_env === undefined) !== (c.key_file === undefined), { message: 'expected exactly one of key_env and key_file', path: ['key_env'] }),
        )
        .default([]),
    })
    .prefault({}),
  /**
   * Outbound events for the whole fleet (an agent's own `events:` adds its URLs): signed JSON POSTs, retried from
   * their own queue `attempts` times with exponential backoff from `retry_base`, then kept as dead letters.
   */
  events: z
    .strictObject({
      urls: z.array(z.url()).default([]),
      secret_env: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/).optional(),
      secret_file: z.string().min(1).optional(),
      attempts: z.number().int().min(1).max(30).default(8),
      retry_base: durationMs.default(2_000),
    })
    .superRefine((v, ctx) => {
      if (v.urls.length > 0 && (v.secret_env === undefined) === (v.secret_file === undefined)) ctx.addIssue({ code: 'custom', path: ['secret_env'], message: 'events.urls need exactly one of secret_env or secret_file' });
    })
    .prefault({}),
  /** The operations endpoint: /healthz, /readyz and /metrics (Prometheus). Loopback unless deliberately exposed. */
  metrics: z
    .strictObject({
      enabled: z.boolean().default(true),
      host: z.string().default('127.0.0.1'),
      port: z.number().int().min(0).max(65_535).default(9464),
    })
    .prefault({}),
});
export type WarrenConfig = z.infer<typeof WarrenConfigSchema>;

/** `warren hub`'s spend-limit flags; each one given replaces its key of warren.yaml's `budget:`. */
export interface BudgetFlags {
  dailyUsd?: number;
  monthlyUsd?: number;
  fleetDailyUsd?: number;
  fleetMonthlyUsd?: number;
}

export function withBudgetFlags(b: WarrenConfig['budget'], f: BudgetFlags): WarrenConfig['budget'] {
  return {
    ...b,
    daily_usd: f.dailyUsd ?? b.daily_usd,
    monthly_usd: f.monthlyUsd ?? b.monthly_usd,
    fleet: { daily_usd: f.fleetDailyUsd ?? b.fleet.daily_usd, monthly_usd: f.fleetMonthlyUsd ?? b.fleet.monthly_usd },
  };
}

/** warren.yaml's `budget:` as the local hub takes it. */
export function hubBudget(b: WarrenConfig['budget']): BudgetConfig {
  return {
    defaultDailyLimitUsd: b.daily_usd || undefined,
    defaultMonthlyLimitUsd: b.monthly_usd || undefined,
    perAgent: Object.fromEntries(Object.entries(b.agents).map(([name, a]) => [name, { daily: a.daily_usd, monthly: a.monthly_usd }])),
    fleetDailyLimitUsd: b.fleet.daily_usd || undefined,
    fleetMonthlyLimitUsd: b.fleet.monthly_usd || undefined,
    warnPct: b.warn_pct,
    throttlePct: b.throttle_pct,
    criticalPct: b.critical_pct,
  };
}

/**
 * Loads warren.yaml (paths in it are relative to the file), then applies the environment overrides
 * REDIS_URL, WARREN_ALLOW_OPEN_REDIS, WARREN_STORE, WARREN_HUB_PORT, WARREN_HUB_HOST, WARREN_HUB_EMBEDDED, WARREN_HUB_URL, WARREN_HUB_WATCH, WARREN_HUB_WATCH_NETWORKS, WARREN_METRICS_HOST, WARREN_METRICS_PORT, WARREN_INGRESS_HOST and WARREN_INGRESS_PORT. A missing file means all defaults.
 */
export function loadWarrenConfig(file: string | undefined, env: NodeJS.ProcessEnv = process.env): WarrenConfig {
  let config: WarrenConfig;
  let base = process.cwd();
  if (file && existsSync(file)) {
    const result = validateYaml(file, readFileSync(file, 'utf8'), WarrenConfigSchema);
    if (!result.ok) throw new DefinitionError(result.problems);
    config = result.value;
    base = dirname(resolve(file));
  } else if (file && file !== 'warren.yaml') {
    throw new DefinitionError([{ file, message: 'config file not found', severity: 'error' }]);
  } else {
    config = WarrenConfigSchema.parse({});
  }
  config.store.path = resolve(base, config.store.path);
  config.store.include = config.store.include.map((p) => resolve(base, p));
  config.executors.cli.workspaces = resolve(base, config.executors.cli.workspaces);
  if (config.secrets.dir !== undefined) config.secrets.dir = resolve(base, config.secrets.dir);
  config.pauses.file = resolve(base, config.pauses.file ?? './data/pauses.json');
  if (config.hub.db !== ':memory:') config.hub.db = resolve(base, config.hub.db);
  if (!isPostgresUrl(config.memory.store) && config.memory.store !== ':memory:') config.memory.store = resolve(base, config.memory.store);
  // Before REDIS_URL: a password in the file's URL is judged by the file's mode; one in the environment is not.
  refuseReadableInlineCredentials(file, config.redis);
  if (env.REDIS_URL) config.redis.url = env.REDIS_URL;
  if (env.WARREN_ALLOW_OPEN_REDIS) config.redis.allow_unauthenticated = /^(1|true|yes)$/i.test(env.WARREN_ALLOW_OPEN_REDIS);
  resolveRedisCredentials(config, base, env);
  if (env.WARREN_STORE) {
    // One variable for where the definitions are: a folder, or an s3:// bucket and prefix.
    if (env.WARREN_STORE.startsWith('s3://')) {
      if (!parseS3Url(env.WARREN_STORE)) throw new Error(`WARREN_STORE must be a folder or s3://bucket/prefix, got "${env.WARREN_STORE}"`);
      config.store.type = 's3';
      config.store.url = env.WARREN_STORE;
    } else {
      config.store.type = 'local';
      config.store.path = resolve(env.WARREN_STORE);
    }
    config.store.include = []; // one variable names the whole store
  }
  if (env.WARREN_HUB_PORT) {
    const port = Number(env.WARREN_HUB_PORT);
    if (!Number.isInteger(port) || port < 0 || port > 65_535) throw new Error(`WARREN_HUB_PORT must be a port number, got "${env.WARREN_HUB_PORT}"`);
    config.hub.port = port;
    if (config.hub.embedded) config.hub.url = `http://127.0.0.1:${port}`;
  }
  if (env.WARREN_HUB_HOST) config.hub.host = env.WARREN_HUB_HOST;
  if (env.WARREN_HUB_EMBEDDED) config.hub.embedded = /^(1|true|yes)$/i.test(env.WARREN_HUB_EMBEDDED);
  if (env.WARREN_HUB_URL) config.hub.url = env.WARREN_HUB_URL;
  if (env.WARREN_HUB_WATCH) {
    const w = env.WARREN_HUB_WATCH;
    if (w !== 'loopback' && w !== 'any' && w !== 'off') throw new Error(`WARREN_HUB_WATCH must be loopback, any or off, got "${w}"`);
    config.hub.watch = w;
  }
  if (env.WARREN_HUB_WATCH_NETWORKS) config.hub.watch_networks = env.WARREN_HUB_WATCH_NETWORKS.split(',').map((n) => n.trim()).filter(Boolean);
  if (env.WARREN_METRICS_HOST) config.metrics.host = env.WARREN_METRICS_HOST;
  if (env.WARREN_METRICS_PORT) {
    const port = Number(env.WARREN_METRICS_PORT);
    if (!Number.isInteger(port) || port < 0 || port > 65_535) throw new Error(`WARREN_METRICS_PORT must be a port number, got "${env.WARREN_METRICS_PORT}"`);
    config.metrics.port = port;
  }
  if (env.WARREN_INGRESS_HOST) config.ingress.host = env.WARREN_INGRESS_HOST;
  if (env.WARREN_INGRESS_PORT) {
    const port = Number(env.WARREN_INGRESS_PORT);
    if (!Number.isInteger(port) || port < 0 || port > 65_535) throw new Error(`WARREN_INGRESS_PORT must be a port number, got "${env.WARREN_INGRESS_PORT}"`);
    config.ingress.port = port;
  }
  return config;
}
