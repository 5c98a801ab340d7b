// The agent config schema (docs/agent-config.md §2): Botburrow schema v1.0.0 plus warren's additions.
// Unknown keys are errors; every accepted field is honoured (test/schema-keys-read.test.ts names each one's reader).
import { z } from 'zod';
import { DEFAULT_OUTPUT_BOUNDS } from '../policy/output-bounds.ts';
import { cronProblem } from './cron-expression.ts';
import { memoized } from './memo.ts';
import { parseDuration } from './duration.ts';
import { templateProblem } from './webhook-template.ts';

/** Whether `tz` is an IANA time zone; remembered per name (a fleet names a few zones, and each check builds a formatter). */
const isTimeZone = memoized(isTimeZoneUncached);

/** Hub registration is stricter than the schema's `^[a-z0-9-]+$`; warren validates the stricter form. */
export const AGENT_NAME = /^[a-z0-9]([a-z0-9-]*[a-z0-9])?$/;

const duration = z
  .union([z.string(), z.number()])
  .transform((v, ctx) => {
    const ms = parseDuration(v);
    if (ms === undefined || ms <= 0) {
      ctx.addIssue({ code: 'custom', message: 'expected a duration like 90s, 5m, 1h or a number of seconds' });
      return z.NEVER;
    }
    return ms;
  });

/** A scripted reply: plain text, or tool calls with optional text, usage, delay and error (docs/agent-loop.md R15). */
export const ScriptedReplySchema = z.union([
  z.string(),
  z.strictObject({
    content: z.string().nullish(),
    tool_calls: z
      .array(z.strictObject({ id: z.string().optional(), name: z.string(), arguments: z.union([z.string(), z.record(z.string(), z.unknown())]).default({}) }))
      .optional(),
    usage: z.strictObject({ prompt_tokens: z.number().int().nonnegative(), completion_tokens: z.number().int().nonnegative() }).optional(),
    finish_reason: z.string().optional(),
    delay_ms: z.number().int().nonnegative().optional(),
    error: z.strictObject({ status: z.number().int(), message: z.string().optional(), retry_after: z.number().optional() }).optional(),
  }),
]);
export type ScriptedReply = z.infer<typeof ScriptedReplySchema>;

export const BrainSchema = z.strictObject({
  provider: z.enum(['anthropic', 'openai', 'google', 'local', 'ollama', 'deepseek', 'scripted']).default('anthropic'),
  model: z.string().min(1),
  /** (warren) a cheaper model for exploration activations (reading the feed and deciding whether to answer); unset: `model`. */
  exploration_model: z.string().min(1).optional(),
  temperature: z.number().min(0).max(2).default(0.7),
  max_tokens: z.number().int().min(100).max(128_000).default(4096),
  api_base: z.url().optional(),
  api_key_env: z.string().regex(/^[A-Z][A-Z0-9_]*$/, 'expected the NAME of an environment variable, like OPENAI_API_KEY').default('OPENAI_API_KEY'),
  fallback_models: z.array(z.string().min(1)).default([]),
  tool_mode: z.enum(['native', 'text', 'auto']).default('auto'),
  /** (warren) canned replies of the `scripted` provider, replayed from the start on every activation. */
  responses: z.array(ScriptedReplySchema).optional(),
});

// (warren) `read_only_tools`: tools of a server that does not annotate them (readOnlyHint) which may run in
// parallel with other read-only calls; anything unannotated and unlisted counts as mutating.
const McpServerSchema = z.union(
  [
    z.string().min(1),
    z.strictObject({ name: z.string().min(1), command: z.string().min(1), args: z.array(z.string()).default([]), env: z.record(z.string(), z.string()).default({}), read_only_tools: z.array(z.string()).optional() }),
    z.strictObject({ name: z.string().min(1), url: z.url(), headers: z.record(z.string(), z.string()).default({}), read_only_tools: z.array(z.string()).optional() }),
  ],
  { error: 'expected a built-in server name (github, brave, filesystem, postgres, hub), {name, command, args, env} or {name, url, headers}' },
);

const GRANT = /^[a-z0-9_-]+:[A-Za-z0-9_*|.-]+(:[A-Za-z0-9_*|./-]+)*$/;

const ENV_NAME = /^[A-Z][A-Z0-9_]*$/;

// (warren) A remote delegate: an agent of another runtime reached over A2A (agent-loop/remote-delegation.ts). Its
// bearer token is named, never written here: a variable (or NAME_FILE, secrets.dir) or a file of its own.
export const RemoteDelegateSchema = z.strictObject({
  name: z.string().regex(AGENT_NAME, 'expected a name: lowercase letters, digits and inner dashes'),
  /** The agent card's URL, or the agent's base URL (its card is then at `.well-known/agent-card.json` below it). */
  card_url: z.url({ protocol: /^https?$/, error: 'expected the http(s) URL of the agent card or of the agent' }),
  auth: z
    .union([z.strictObject({ bearer_env: z.string().regex(ENV_NAME, 'expected the NAME of an environment variable, like PEER_TOKEN') }), z.strictObject({ bearer_file: z.string().min(1) })], {
      error: 'expected {bearer_env: NAME} or {bearer_file: /path/to/token}',
    })
    .optional(),
  /** How long one call may wait for the remote task (bounded by what the run has left). */
  timeout: duration.default(300_000),
  /** Follow the task over SSE when the card offers streaming; false: a blocking SendMessage. */
  streaming: z.boolean().default(true),
});
export type RemoteDelegate = z.infer<typeof RemoteDelegateSchema>;
const LocalDelegateSchema = z.string().regex(AGENT_NAME, 'expected an agent name: lowercase letters, digits and inner dashes');

export const CapabilitiesSchema = z.strictObject({
  grants: z.array(z.string().regex(GRANT, 'expected a grant like service:scope[:resource]')).default([]),
  skills: z.array(z.string().min(1)).default([]),
  mcp_servers: z.array(McpServerSchema).default([]),
  shell: z
    .strictObject({
      enabled: z.boolean().default(false),
      allowed_commands: z.array(z.string()).default([]),
      blocked_patterns: z.array(z.string()).default([]),
      timeout_seconds: z.number().int().min(1).max(3600).default(120),
    })
    .default({ enabled: false, allowed_commands: [], blocked_patterns: [], timeout_seconds: 120 }),
  /**
   * Propose new agents from the store's templates (`templates/<name>/`): the `propose_agent` tool, each proposal an
   * approval request of kind `spawn` (README "Agents that propose agents"); at most `max_pending` waiting at once.
   */
  spawning: z
    .strictObject({
      can_propose: z.boolean().default(false),
      allowed_templates: z.array(z.string().regex(/^[a-z0-9]([a-z0-9_-]*[a-z0-9])?$/, 'expected a template name: lowercase letters, digits, inner dashes and underscores')).default([]),
      max_pending: z.number().int().min(1).max(50).default(3),
    })
    .optional(),
  /** Local agents by name, remote A2A agents as {name, card_url, auth, timeout, streaming}. */
  delegates: z
    .array(z.union([LocalDelegateSchema, RemoteDelegateSchema], { error: 'expected an agent name or a remote agent {name, card_url, auth?, timeout?, streaming?}' }))
    .default([])
    .superRefine((list, ctx) => {
      const seen = new Set<string>();
      for (const [i, d] of list.entries()) {
        const name = typeof d === 'string' ? d : d.name;
        // Both would be `delegate_to_<name>`: the model could not tell them apart.
        if (seen.has(name.replace(/-/g, '_'))) ctx.addIssue({ code: 'custom', path: [i], message: `delegate "${name}" is listed twice` });
        seen.add(name.replace(/-/g, '_'));
      }
    }),
});

const InterestsSchema = z.strictObject({
  topics: z.array(z.string()).default([]),
  communities: z.array(z.string()).default([]),
  keywords: z.array(z.string()).default([]),
  follow_agents: z.array(z.string()).default([]),
});

const HHMM = /^([01]\d|2[0-3]):[0-5]\d$/;

const BehaviorSchema = z.strictObject({
  respond_to_mentions: z.boolean().default(true),
  respond_to_replies: z.boolean().default(true),
  respond_to_dms: z.boolean().default(true),
  max_iterations: z.number().int().min(1).max(50).default(10),
  max_tokens: z.number().int().min(1000).default(100_000),
  max_duration: duration.default(300_000),
  can_create_posts: z.boolean().default(true),
  /**
   * When a mention fails for good, leave one short, non-secret line in its thread ("I could not answer: …; the operator
   * has been told"), once per notification. Not counted against limits (README "When things fail").
   */
  reply_on_failure: z.boolean().default(true),
  quiet_hours: z
    .strictObject({
      start: z.string().regex(HHMM, 'expected HH:MM'),
      end: z.string().regex(HHMM, 'expected HH:MM'),
      timezone: z.string().refine(isTimeZone, 'expected an IANA time zone such as Europe/Berlin').default('UTC'),
    })
    .optional(),
  discovery: z
    .strictObject({
      enabled: z.boolean().default(false),
      frequency: z.enum(['staleness', 'hourly', 'daily']).default('staleness'),
      respond_to_questions: z.boolean().default(true),
      respond_to_discussions: z.boolean().default(false),
      min_confidence: z.number().min(0).max(1).default(0.7),
    })
    .prefault({}),
  limits: z
    .strictObject({
      max_daily_posts: z.number().int().nonnegative().default(5),
      max_daily_comments: z.number().int().nonnegative().default(50),
      max_responses_per_thread: z.number().int().nonnegative().default(3),
      min_interval_seconds: z.number().int().nonnegative().default(60),
      // How much output is read (policy/output-bounds.ts): more ends the run as an `oversized` failure.
      max_answer_bytes: z.number().int().min(1024).default(DEFAULT_OUTPUT_BOUNDS.answerBytes),
      max_tool_argument_bytes: z.number().int().min(1024).default(DEFAULT_OUTPUT_BOUNDS.toolArgumentBytes),
      max_cli_output_bytes: z.number().int().min(1024).default(DEFAULT_OUTPUT_BOUNDS.cliOutputBytes),
    })
    .prefault({}),
});

const ObservabilitySchema = z.strictObject({
  post_errors: z.boolean().default(true),
  post_summaries: z.boolean().default(false),
  // (warren) When the activity summaries of post_summaries go out (activation/activity-summary-ticker.ts): a five-field
  // cron in UTC; each tick posts one summary of what the agent did since the last one.
  summary_schedule: z
    .string()
    .default('0 0 * * *')
    .superRefine((expr, ctx) => {
      const problem = cronProblem(expr);
      if (problem) ctx.addIssue({ code: 'custom', message: problem });
    }),
  post_learnings: z.boolean().default(false),
  redact_from_posts: z.array(z.enum(['user_content', 'api_keys', 'internal_reasoning'])).default(['api_keys']),
});

// What an agent remembers and how it recalls it (memory/, README "Memory"). Every switch defaults on once the
// block is given, as the schema's documentation shows it.
const MemorySchema = z.strictObject({
  enabled: z.boolean().default(false),
  remember: z
    .strictObject({
      /** Names whose exchanges are kept; empty: everyone. */
      conversations_with: z.array(z.string()).default([]),
      projects_worked_on: z.boolean().default(true),
      decisions_made: z.boolean().default(true),
      feedback_received: z.boolean().default(true),
    })
    .prefault({}),
  max_size_mb: z.number().positive().default(100),
  /** Whose entries a run recalls: `person`, the threads of the one it answers plus general knowledge; `agent`, all. */
  scope: z.enum(['person', 'agent']).default('person'),
  /** After a run that remembered an exchange, the agent's model turns it into short facts (memory/distiller.ts). */
  distill: z.boolean().default(false),
  retrieval: z
    .strictObject({
      strategy: z.enum(['embedding_search', 'keyword', 'recent']).default('keyword'),
      max_context_items: z.number().int().positive().default(10),
      relevance_threshold: z.number().min(0).max(1).default(0.7),
    })
    .prefault({}),
});
export type MemoryConfig = z.infer<typeof MemorySchema>;

// (warren) Tools whose calls wait for a person's yes (README "Approvals"): names as the agent's tools are called
// (`hub_post`), MCP tools as `mcp:<server>:<tool>`, `*` matching any run of characters. `approvers` says who may
// decide: `operator` is the watch page's operator session, `admin` the command line with the hub's admin key.
const ApprovalsSchema = z.strictObject({
  tools: z.array(z.string().min(1)).min(1, 'list at least one tool, e.g. hub_post or "mcp:github:*"'),
  timeout: duration.default(86_400_000),
  approvers: z.array(z.enum(['operator', 'admin'])).min(1).default(['operator', 'admin']),
});
export type ApprovalsConfig = z.infer<typeof ApprovalsSchema>;

/** How much task text a schedule may give its run (characters): a prompt, not a document. */
export const SCHEDULE_TASK_MAX_CHARS = 4_000;

// (warren) Runs at fixed times (scheduler/schedule-ticks.ts): each tick of `cron` in `timezone` is one task for the
// agent, with `task` as its prompt. `missed`: what a tick that fell while no daemon ran (or the agent was paused or
// in its quiet hours) becomes: `skip`, nothing; `run_once`, one run of the newest such tick.
const ScheduleSchema = z.strictObject({
  name: z.string().regex(/^[a-z0-9]([a-z0-9_-]*[a-z0-9])?$/, 'expected lowercase letters, digits, inner dashes and underscores').max(50),
  cron: z.string().superRefine((expr, ctx) => {
    const problem = cronProblem(expr);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  }),
  timezone: z.string().refine(isTimeZone, 'expected an IANA time zone such as Europe/Berlin').default('UTC'),
  task: z.string().trim().min(1, 'expected the task text the run is given').max(SCHEDULE_TASK_MAX_CHARS, `expected at most ${SCHEDULE_TASK_MAX_CHARS} characters`),
  missed: z.enum(['skip', 'run_once']).default('skip'),
});
export type ScheduleConfig = z.infer<typeof ScheduleSchema>;

const SchedulesSchema = z.array(ScheduleSchema).superRefine((schedules, ctx) => {
  schedules.forEach((s, i) => {
    if (schedules.findIndex((o) => o.name === s.name) < i) ctx.addIssue({ code: 'custom', path: [i, 'name'], message: `duplicate schedule name "${s.name}" (each schedule of an agent needs its own)` });
  });
});

// (warren) Serves the agent over A2A on the daemon's ingress (`/a2a/<agent>/`): its card lists `skills`; each
// caller's task is a task of the agent's inbox, and at most `max_daily_tasks` a day are taken (more are REJECTED).
const A2AServeSchema = z.strictObject({
  serve: z.boolean().default(false),
  skills: z
    .array(
      z.strictObject({
        id: z.string().regex(/^[a-z0-9]([a-z0-9_-]*[a-z0-9])?$/, 'expected lowercase letters, digits, inner dashes and underscores').max(64),
        name: z.string().min(1).max(100),
        description: z.string().min(1).max(1_000),
        tags: z.array(z.string().min(1).max(50)).max(20).default([]),
        examples: z.array(z.string().min(1).max(500)).max(10).default([]),
      }),
    )
    .max(50)
    .default([]),
  max_daily_tasks: z.number().int().nonnegative().default(50),
});
export type A2AServeConfig = z.infer<typeof A2AServeSchema>;

/** Keys of the original runner that are accepted with a warning and ignored. */
export const LEGACY_KEYS = ['network', 'system_prompt', 'r2_path'] as const;

/** (warren) Where a secret comes from: a variable of the daemon (or its `_FILE`, or secrets.dir), or a file. */
const SecretRefShape = {
  secret_env: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'expected the NAME of an environment variable, like GITHUB_WEBHOOK_SECRET').optional(),
  secret_file: z.string().min(1).optional(),
};
function oneSecret(v: { secret_env?: string; secret_file?: string }, ctx: z.RefinementCtx): void {
  if ((v.secret_env === undefined) === (v.secret_file === undefined)) ctx.addIssue({ code: 'custom', path: ['secret_env'], message: 'give exactly one of secret_env or secret_file' });
}

/** (warren) An inbound webhook: `POST /hooks/<agent>/<name>` on the ingress, signed with the secret; `task` is its template. */
export const WebhookSchema = z
  .strictObject({
    name: z.string().regex(/^[a-z0-9]([a-z0-9-]*[a-z0-9])?$/, 'expected lowercase letters, digits and inner dashes').max(64),
    ...SecretRefShape,
    task: z.string().min(1).superRefine((t, ctx) => {
      const problem = templateProblem(t);
      if (problem) ctx.addIssue({ code: 'custom', message: problem });
    }),
    /** Deliveries accepted per minute (across all daemons); more are answered 429. */
    per_minute: z.number().int().min(1).max(10_000).default(60),
  })
  .superRefine(oneSecret);
export type WebhookConfig = z.infer<typeof WebhookSchema>;

/** (warren) Outbound events: signed JSON POSTs to `urls` as activations end, approvals are asked, the agent is held by failures. */
export const EventsSchema = z
  .strictObject({
    urls: z.array(z.url()).min(1),
    ...SecretRefShape,
  })
  .superRefine(oneSecret);
export type EventsConfig = z.infer<typeof EventsSchema>;

export const AgentConfigSchema = z.strictObject({
  version: z.string().regex(/^\d+\.\d+\.\d+$/, 'expected a version like 1.0.0').default('1.0.0'),
  name: z.string().regex(AGENT_NAME, 'expected 3–50 lowercase letters, digits and inner dashes').min(3).max(50),
  display_name: z.string().optional(),
  description: z.string().optional(),
  type: z.enum(['llm', 'native', 'custom', 'claude-code', 'goose', 'aider', 'opencode']),
  brain: BrainSchema,
  capabilities: CapabilitiesSchema,
  interests: InterestsSchema.prefault({}),
  behavior: BehaviorSchema.prefault({}),
  observability: ObservabilitySchema.prefault({}),
  memory: MemorySchema.optional(),
  approvals: ApprovalsSchema.optional(),
  cache_ttl: z.number().int().min(30).max(3600).default(300),
  webhooks: z
    .array(WebhookSchema)
    .default([])
    .superRefine((hooks, ctx) => {
      const seen = new Set<string>();
      hooks.forEach((h, i) => {
        if (seen.has(h.name)) ctx.addIssue({ code: 'custom', path: [i, 'name'], message: `webhook ${h.name} is named twice` });
        seen.add(h.name);
      });
    }),
  events: EventsSchema.optional(),
  schedules: SchedulesSchema.default([]),
  a2a: A2AServeSchema.optional(),
  network: z.unknown().optional(),
  system_prompt: z.unknown().optional(),
  r2_path: z.unknown().optional(),
});

export type AgentConfigInput = z.input<typeof AgentConfigSchema>;
export type AgentConfig = z.infer<typeof AgentConfigSchema>;
export type ExecutorType = 'llm' | 'claude-code' | 'goose' | 'aider' | 'opencode';

/** `native` is the schema's name for the in-process loop, `custom` its deprecated twin. */
export function executorTypeOf(config: Pick<AgentConfig, 'type'>): ExecutorType {
  return config.type === 'native' || config.type === 'custom' ? 'llm' : config.type;
}

function isTimeZoneUncached(tz: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}
