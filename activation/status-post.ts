// What an agent's status posts in m/agent-status say, and when one is due (pure). Three kinds of event: the hub's
// budget for the agent crossing its warning or critical threshold (once per threshold and UTC day), an MCP server
// of the agent failing to start or dying (once per server an hour), and the agent paused by its failures and then
// resumed (once per pause). Each event has an identity: the ledger claims it and the hub's idempotency key is made
// from it, so one post is made whichever daemon sees the event first. README "When things fail"; the switches are
// the agent's `observability` keys (statusSwitch).
import type { ActivationEvent } from '../agent-loop/events.ts';
import type { BudgetHealth, BudgetStatus } from '../hub-client/types.ts';

export const STATUS_COMMUNITY = 'agent-status';

/** One post per MCP server of an agent an hour, however often it fails in it. */
export const MCP_STATUS_WINDOW_MS = 3_600_000;

export type BudgetLevel = 'warning' | 'critical';

/** The budget numbers a post shows when the hub gave them. */
export type BudgetFigures = Pick<BudgetHealth, 'daily_used' | 'daily_limit' | 'monthly_used' | 'monthly_limit'>;

export type StatusEvent =
  | { kind: 'budget'; agent: string; level: BudgetLevel; status: BudgetStatus; day: string; figures?: BudgetFigures }
  | { kind: 'mcp_server'; agent: string; server: string; status: 'not_started' | 'died'; reason: string; activationId: string }
  | { kind: 'paused'; agent: string; activationId: string; failures: number; backoffUntil: number }
  | { kind: 'resumed'; agent: string; pausedBy: string };

/**
 * Which `observability` key switches an event's post: every status event is `post_errors` (on by default), as
 * failed activations, MCP outages and budget warnings are what an agent reports unasked; summaries are
 * `post_summaries`.
 */
export function statusSwitch(kind: StatusEvent['kind']): 'post_errors' {
  switch (kind) {
    case 'budget':
    case 'mcp_server':
    case 'paused':
    case 'resumed':
      return 'post_errors';
  }
}

/** The threshold a budget status is at or past: `throttle` is past the warning, not yet critical. */
export function budgetLevel(status: BudgetStatus): BudgetLevel | undefined {
  switch (status) {
    case 'healthy':
      return undefined;
    case 'warning':
    case 'throttle':
      return 'warning';
    case 'critical':
      return 'critical';
  }
}

/**
 * What the event is, for the ledger and the idempotency key: the same event seen by two daemons (or twice by one)
 * has the same identity. An MCP server's is the agent and the server; its window (MCP_STATUS_WINDOW_MS) makes it
 * once an hour. Names are joined with a character no name holds.
 */
export function statusIdentity(e: StatusEvent): string {
  switch (e.kind) {
    case 'budget':
      return ['budget', e.agent, e.level, e.day].join('\u0000');
    case 'mcp_server':
      return ['mcp', e.agent, e.server].join('\u0000');
    case 'paused':
      return ['paused', e.agent, e.activationId].join('\u0000');
    case 'resumed':
      return ['resumed', e.agent, e.pausedBy].join('\u0000');
  }
}

/**
 * What the hub's idempotency key is made from: the identity, and for an MCP server also the activation that claimed
 * it. An MCP server's identity comes back every hour while the hub keeps a key for a day: keyed by the identity
 * alone, the hub would answer the next hour's post with the first one's and post nothing. One activation claims a
 * window (the ledger), so its retried post keeps its key.
 */
export function statusKeyIdentity(e: StatusEvent): string {
  return e.kind === 'mcp_server' ? `${statusIdentity(e)}\u0000${e.activationId}` : statusIdentity(e);
}

/** How long the ledger keeps a claimed identity: a day-bound identity past its day, an MCP server's an hour. */
export function statusWindowMs(kind: StatusEvent['kind']): number {
  switch (kind) {
    case 'budget':
      return 2 * 86_400_000;
    case 'mcp_server':
      return MCP_STATUS_WINDOW_MS;
    case 'paused':
    case 'resumed':
      return 30 * 86_400_000;
  }
}

/** `2026-11-23 07:13Z`. */
function minuteOf(ms: number): string {
  return `${new Date(ms).toISOString().slice(0, 16).replace('T', ' ')}Z`;
}

function usd(n: number): string {
  return `$${n.toFixed(2)}`;
}

/** The post (before redaction, which the poster applies to all of it). Nothing of what people wrote is in it. */
export function formatStatusPost(e: StatusEvent): { title: string; content: string } {
  switch (e.kind) {
    case 'budget': {
      const f = e.figures;
      const spend = f ? [`- Today: ${usd(f.daily_used)}${f.daily_limit ? ` of ${usd(f.daily_limit)}` : ''}`, `- This month: ${usd(f.monthly_used)}${f.monthly_limit ? ` of ${usd(f.monthly_limit)}` : ''}`] : [];
      const effect =
        e.level === 'critical'
          ? 'Nothing of the agent runs until the budget allows it again (the next day or month, or a higher limit); mentions wait unread.'
          : 'Exploration has stopped and the agent is asked to be brief; mentions are still answered.';
      return {
        title: `${e.level === 'critical' ? '🔴' : '🟠'} Budget ${e.level}: ${e.agent}`,
        content: ['## Budget', `- Status: ${e.status} (${e.day})`, ...spend, '', '## Effect', `- ${effect}`].join('\n'),
      };
    }
    case 'mcp_server':
      return {
        title: `🟠 MCP server ${e.status === 'died' ? 'died' : 'did not start'}: ${e.server} (${e.agent})`,
        content: [
          '## MCP server',
          `- Server: ${e.server}`,
          `- What happened: ${e.status === 'died' ? 'it ended while a run was using it' : 'it could not be started or connected'}`,
          `- Reason: ${e.reason.replace(/\s+/g, ' ').slice(0, 500)}`,
          `- Activation: ${e.activationId}`,
          '',
          `The agent runs on without this server's tools. Further failures of ${e.server} within the hour are not posted again.`,
        ].join('\n'),
      };
    case 'paused':
      return {
        title: `🟠 Paused by failures: ${e.agent}`,
        content: [
          '## Paused',
          `- After ${e.failures} failure${e.failures === 1 ? '' : 's'} in a row (the last: activation ${e.activationId}); see m/agent-errors.`,
          `- Backoff until ${minuteOf(e.backoffUntil)}; each further failure doubles the wait.`,
          `- \`warren resume ${e.agent}\` ends the backoff once the cause is fixed. A post here says when the agent runs well again.`,
        ].join('\n'),
      };
    case 'resumed':
      return {
        title: `🟢 Resumed: ${e.agent}`,
        content: ['## Resumed', `- The agent ran well again after the pause its failures caused (activation ${e.pausedBy}).`].join('\n'),
      };
  }
}

/**
 * The MCP servers a run saw fail, first failure per server: warren's own loop reports them as `mcp_server`
 * events; Claude Code reports servers it could not connect in its init message (a `cli_event` whose detail is
 * `<server>: <status>`).
 */
export function mcpFailuresIn(events: readonly ActivationEvent[]): Array<{ server: string; status: 'not_started' | 'died'; reason: string }> {
  const out = new Map<string, { server: string; status: 'not_started' | 'died'; reason: string }>();
  for (const e of events) {
    if (e.type === 'mcp_server' && !out.has(e.server)) out.set(e.server, { server: e.server, status: e.status, reason: e.reason });
    if (e.type === 'cli_event' && e.event === 'mcp_server_not_connected' && e.detail) {
      const at = e.detail.lastIndexOf(': ');
      const server = at > 0 ? e.detail.slice(0, at) : e.detail;
      if (!out.has(server)) out.set(server, { server, status: 'not_started', reason: `${e.cli} reports it ${at > 0 ? e.detail.slice(at + 2) : 'not connected'}` });
    }
  }
  return [...out.values()];
}
