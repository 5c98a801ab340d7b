// Notifications (docs/hub-api.md §5.3) and the long-poll (§7). Also served under `/inbox` (an alias, docs/hub-api.md §3).
import { z } from 'zod';
import { actingAgent } from '../auth.ts';
import type { BudgetHealthReader } from '../budget-health.ts';
import { invalid } from '../http-error.ts';
import { ok, type Router } from '../router.ts';
import type { HubServices } from '../services.ts';
import { boolParam, intParam, numberParam, parseBody } from '../validation.ts';
import { notificationView } from '../views.ts';

const ReadBody = z.looseObject({
  notification_ids: z.array(z.string()).max(10_000),
  agent_id: z.string().nullish(),
});
const ReadAllBody = z.looseObject({ agent_id: z.string().nullish() });

/**
 * Cursors are opaque to clients; inside, a tag and a position. The tag keeps the two kinds apart: a notification
 * list's cursor (`n`, the last position shown) is refused by the long-poll (`p`, an offset in its ordering, §7).
 */
function encodeTagged(tag: 'n' | 'p', position: number): string {
  return Buffer.from(`${tag}${position}`).toString('base64url');
}

function decodeTagged(tag: 'n' | 'p', maxDigits: number, cursor: string): number {
  const m = new RegExp(`^${tag}(\\d{1,${maxDigits}})$`).exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (!m) throw invalid('cursor is not one this hub gave out');
  return Number(m[1]);
}

export const encodeCursor = (seq: number): string => encodeTagged('n', seq);
export const decodeCursor = (cursor: string): number => decodeTagged('n', 15, cursor);
const encodePollCursor = (offset: number): string => encodeTagged('p', offset);
const decodePollCursor = (cursor: string): number => decodeTagged('p', 9, cursor);

export function notificationRoutes(r: Router, s: HubServices, budget: BudgetHealthReader): void {
  for (const base of ['/api/v1/notifications', '/api/v1/inbox']) {
    r.get(base, (ctx) => {
      const q = ctx.query;
      const ref = q.get('agent_id');
      const agent = actingAgent(ctx.caller, ref, s.agents);
      const limit = intParam(q, 'limit', 50, 1, 100);
      const cursor = q.get('cursor');
      const unreadOnly = boolParam(q, 'unread') || boolParam(q, 'unread_only');
      const rows = s.notifications.page(agent.id, { unreadOnly, beforeSeq: cursor ? decodeCursor(cursor) : Number.MAX_SAFE_INTEGER, limit: limit + 1 });
      const page = rows.slice(0, limit);
      return ok({
        notifications: page.map(notificationView),
        unread_count: s.notifications.counts(agent.id).unread,
        next_cursor: rows.length > limit ? encodeCursor(page.at(-1)!.seq) : null,
        // The agent's budget-health answer (§5.6) with its inbox: one round trip for an activation's start.
        ...(boolParam(q, 'include_budget') ? { budget: budget.answer(agent, ref ?? agent.name) } : {}),
      });
    });

    r.post(`${base}/read`, (ctx) => {
      const b = parseBody(ReadBody, ctx.body);
      const agent = actingAgent(ctx.caller, b.agent_id, s.agents);
      return ok({ success: true, marked: s.notifications.markRead(agent.id, b.notification_ids) });
    }, 'any', { plainReplay: true });

    r.post(`${base}/read-all`, (ctx) => {
      const b = parseBody(ReadAllBody, ctx.body);
      const agent = actingAgent(ctx.caller, b.agent_id, s.agents);
      return ok({ success: true, marked: s.notifications.markAllRead(agent.id) });
    }, 'any', { plainReplay: true });

    r.get(`${base}/count`, (ctx) => ok(s.notifications.counts(actingAgent(ctx.caller, ctx.query.get('agent_id'), s.agents).id)));

    // Answers at once when an agent has work; otherwise holds the request until a commit creates a
    // notification for a non-human agent, or the (capped) timeout passes, which answers `{agents:[]}`.
    // `next_cursor` pages past the first `batch_size` agents: a page asked for with a cursor is never held.
    r.get(
      `${base}/poll`,
      async (ctx) => {
        // A longer wait than the hub holds is accepted and shortened; a day bounds what is worth parsing.
        const timeoutSeconds = Math.min(numberParam(ctx.query, 'timeout', 30, 0, 86_400), s.maxPollSeconds);
        const batch = intParam(ctx.query, 'batch_size', 100, 1, 1000);
        const cursor = ctx.query.get('cursor');
        const offset = cursor ? decodePollCursor(cursor) : 0;
        const deadline = cursor ? Date.now() : Date.now() + timeoutSeconds * 1000;
        for (;;) {
          const rows = s.agents.withWork(batch + 1, offset);
          const agents = rows.slice(0, batch);
          const next_cursor = rows.length > batch ? encodePollCursor(offset + batch) : null;
          const left = deadline - Date.now();
          if (agents.length > 0 || left <= 0) return ok({ agents, next_cursor });
          // A wake for a human's notification finds no work and waits again for the rest of the time.
          const end = await s.work.wait(left, ctx.signal);
          if (end === 'aborted' || end === 'closed') return ok({ agents: [], next_cursor: null });
        }
      },
      'admin',
    );
  }
}
