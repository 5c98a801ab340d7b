// Posts an agent's status events to m/agent-status as the agent (activation/status-post.ts says what and when):
// each event claimed in the shared ledger first, so one daemon posts it, and sent with an idempotency key made
// from the event, so a retried post is made once. Never throws: a post that fails is logged and left for the
// next sight of the event.
import type { Logger } from 'pino';
import type { ActivationEvent } from '../agent-loop/events.ts';
import type { HubAdapter } from '../hub-client/adapter.ts';
import type { BudgetHealth, BudgetStatus } from '../hub-client/types.ts';
import { statusPostKey } from '../policy/idempotency-keys.ts';
import type { Redactor } from '../services/redact.ts';
import type { AgentDefinition } from '../store/definition.ts';
import { budgetLevel, formatStatusPost, mcpFailuresIn, STATUS_COMMUNITY, statusIdentity, statusKeyIdentity, statusSwitch, statusWindowMs, type StatusEvent } from './status-post.ts';
import type { StatusPostLedger } from './status-post-ledger.ts';

export type StatusPostResult = { posted: string } | { skipped: 'disabled' | 'claimed' | 'failed' };

export class StatusPoster {
  readonly #hub: HubAdapter;
  readonly #redactor: Redactor;
  readonly #logger: Logger;
  readonly #ledger: StatusPostLedger;
  readonly #agents: { get(name: string): AgentDefinition | undefined };
  /** Budget levels this daemon knows are posted (agent and level → UTC day): spares the ledger a claim per budget check. */
  readonly #budgetSeen = new Map<string, string>();

  constructor(hub: HubAdapter, redactor: Redactor, logger: Logger, ledger: StatusPostLedger, agents: { get(name: string): AgentDefinition | undefined }) {
    this.#hub = hub;
    this.#redactor = redactor;
    this.#logger = logger;
    this.#ledger = ledger;
    this.#agents = agents;
  }

  /** The hub's word on the agent's budget (a scheduler's check or an activation's); `health` gives the post its figures. */
  async budget(agent: string, status: BudgetStatus, health?: BudgetHealth, now: Date = new Date()): Promise<StatusPostResult | undefined> {
    const level = budgetLevel(status);
    if (!level) return undefined;
    const day = now.toISOString().slice(0, 10);
    const seen = `${agent}\u0000${level}`;
    if (this.#budgetSeen.get(seen) === day) return undefined;
    const result = await this.#post({ kind: 'budget', agent, level, status, day, figures: health });
    // Posted here or by another daemon: not claimed again today. A failed or switched-off post is asked again.
    if ('posted' in result || result.skipped === 'claimed') this.#budgetSeen.set(seen, day);
    return result;
  }

  /** The MCP servers the activation saw fail: one post per server an hour. */
  async mcpServers(agent: string, activationId: string, events: readonly ActivationEvent[]): Promise<StatusPostResult[]> {
    const out: StatusPostResult[] = [];
    for (const f of mcpFailuresIn(events)) out.push(await this.#post({ kind: 'mcp_server', agent, activationId, ...f }));
    return out;
  }

  /** A final failure started (or lengthened) the agent's backoff: posted when it paused an agent that ran until now. */
  async paused(agent: string, activationId: string, backoff: { failures: number; backoffUntil: number }): Promise<StatusPostResult | undefined> {
    if (!this.#enabled(agent, 'paused')) return { skipped: 'disabled' };
    if (!(await this.#ledger.markPaused(agent, activationId))) return undefined;
    const result = await this.#post({ kind: 'paused', agent, activationId, ...backoff });
    // Not posted: the pause is not remembered either, so the next failure posts it.
    if ('skipped' in result && result.skipped === 'failed') await this.#ledger.takePaused(agent).catch(() => undefined);
    return result;
  }

  /** The agent ran well (its backoff reset): posted when that ends a pause its failures caused. */
  async ranWell(agent: string): Promise<StatusPostResult | undefined> {
    if (!this.#enabled(agent, 'resumed')) return undefined;
    const pausedBy = await this.#ledger.takePaused(agent);
    if (pausedBy === undefined) return undefined;
    return this.#post({ kind: 'resumed', agent, pausedBy });
  }

  #enabled(agent: string, kind: StatusEvent['kind']): boolean {
    const def = this.#agents.get(agent);
    // A public network (Moltbook) gets none of these posts, as it gets no error posts.
    if (this.#hub.capabilities?.errorPosts === false) return false;
    return def?.config.observability[statusSwitch(kind)] ?? false;
  }

  async #post(e: StatusEvent): Promise<StatusPostResult> {
    if (!this.#enabled(e.agent, e.kind)) return { skipped: 'disabled' };
    const identity = statusIdentity(e);
    if (!(await this.#ledger.claim(identity, statusWindowMs(e.kind)))) return { skipped: 'claimed' };
    try {
      // A run knows only the status: the figures are asked for once the post is this daemon's to make.
      if (e.kind === 'budget' && !e.figures) e = { ...e, figures: await this.#hub.budgetHealth(e.agent).catch(() => undefined) };
      const post = formatStatusPost(e);
      const created = await this.#hub.createPost(
        { agent: e.agent, community: STATUS_COMMUNITY, title: this.#redactor.redact(post.title), content: this.#redactor.redact(post.content) },
        { idempotencyKey: statusPostKey(statusKeyIdentity(e)) },
      );
      this.#logger.info({ agent: e.agent, status: e.kind, post: created.id }, 'status posted to m/agent-status');
      return { posted: created.id };
    } catch (err) {
      await this.#ledger.forget(identity).catch(() => undefined);
      this.#logger.warn({ agent: e.agent, status: e.kind, err: this.#redactor.redact(err instanceof Error ? err.message : String(err)) }, 'could not post the status to m/agent-status');
      return { skipped: 'failed' };
    }
  }
}
