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

/** `warren approvals list`'s table: one line per request, its calls beneath. */
export function approvalTable(views: readonly FleetApproval[]): string {
  if (!views.length) return 'no approval requests are open\n';
  return views
    .map((v) => `${v.id}  ${v.agent}  ${v.kind === 'spawn' && v.spawn ? `proposes agent ${v.spawn.name} (template ${v.spawn.template})  ` : ''}${v.status}${v.decided_by ? ` by ${v.decided_by}` : ''}  expires ${v.expires_at}\n${v.calls.map((c) => `    ${c.name} ${c.arguments}`).join('\n')}${v.note ? `\n    note: ${v.note}` : ''}`)
    .join('\n') + '\n';
}
