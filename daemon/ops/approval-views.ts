// Approval requests as people read them: the watch page's rows and `warren approvals list` (pure).
import type { FleetApproval } from '../../local-hub/watch/fleet.ts';
import type { ApprovalEntry } from '../../scheduler/approval-store.ts';

export function approvalView(e: ApprovalEntry): FleetApproval {
  const d = e.decision;
  return {
    id: e.request.id,
    agent: e.request.agent,
    created_at: new Date(e.request.createdAt).toISOString(),
    expires_at: new Date(e.request.expiresAt).toISOString(),
    calls: e.request.calls.map((c) => ({ name: c.name, arguments: c.arguments })),
    status: d ? d.kind : 'waiting',
    decided_by: d?.by ?? null,
    note: d?.note || null,
    kind: e.request.work.kind,
    ...(e.request.work.kind === 'spawn' ? { spawn: { name: e.request.work.name, template: e.request.work.template, purpose: e.request.work.purpose } } : {}),
  };
}

/** A row of `warren approvals list`: the page's view, and whether the work it held is done. */
export type ApprovalListRow = FleetApproval & { done: boolean };

/** The open requests (oldest deadline first), then the done ones (newest first); one row per id (pure). */
export function approvalListRows(open: readonly ApprovalEntry[], done: readonly ApprovalEntry[]): ApprovalListRow[] {
  const openIds = new Set(open.map((e) => e.request.id));
  return [...open.map((e) => ({ ...approvalView(e), done: false })), ...done.filter((e) => !openIds.has(e.request.id)).map((e) => ({ ...approvalView(e), done: true }))];
}

/** `warren approvals list`'s table: one line per request, its calls beneath. */
export function approvalTable(views: readonly (FleetApproval & { done?: boolean })[], now = Date.now()): string {
  if (!views.length) return 'no approval requests are open\n';
  const state = (v: FleetApproval & { done?: boolean }): string => {
    if (v.status === 'waiting') return Date.parse(v.expires_at) <= now ? 'waiting (timed out: the next sweep denies it)' : `waiting, expires ${v.expires_at}`;
    return `${v.status} by ${v.decided_by}${v.done ? ', done' : ', about to run'}`;
  };
  return views.map((v) => `${v.id}  ${v.agent}  ${v.kind === 'spawn' && v.spawn ? `proposes agent ${v.spawn.name} (template ${v.spawn.template})  ` : ''}${state(v)}\n${v.calls.map((c) => `    ${c.name} ${c.arguments}`).join('\n')}${v.note ? `\n    note: ${v.note}` : ''}`).join('\n') + '\n';
}
