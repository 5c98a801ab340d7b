// A CLI agent's hub write that waits for approval (README "Approvals"), decided where it passes: the hub gateway
// (services/hub-gateway.ts). The gateway sees routes, not tools, so a write is named as the tools that make it:
// a post is `hub_post` (and `post_learning` when it goes to m/agent-learnings), a comment `hub_reply`, each also as
// the MCP tool of the CLI's hub server (`mcp:hub:hub_post`). The request a held write becomes is keyed by the
// agent and the write's idempotency key, so the same write sent again is the same request. Pure functions.
import { approvalRule } from '../agent-loop/approval-rule.ts';
import { LEARNINGS_COMMUNITY, POST_LEARNING_TOOL } from '../agent-loop/learning-tool.ts';
import { mcpToolName } from '../agent-loop/mcp-tools.ts';
import { HUB_MCP_NAME } from '../executors/cli/mcp.ts';
import { bareCommunity } from '../hub-client/client.ts';
import type { HeldWriteAnswer } from '../hub-client/write-held.ts';
import { approvalIdOf, shownArguments, type ApprovalEntry, type ApprovalRequest } from '../scheduler/approval-store.ts';
import type { HubWrite } from '../scheduler/write-allowance.ts';
import type { ApprovalsConfig } from '../store/agent-config.ts';

/** The write as a request keeps it: what the daemon posts after approval (already redacted). */
export type HeldWrite = Extract<ApprovalRequest['work'], { kind: 'hub_write' }>['write'];

/** The tool names a write through the gateway goes by, first the one a request shows. */
export function heldWriteNames(write: HubWrite, community: string | null): string[] {
  const tools = write.kind === 'comment' ? ['hub_reply'] : community !== null && bareCommunity(community) === LEARNINGS_COMMUNITY ? ['hub_post', POST_LEARNING_TOOL] : ['hub_post'];
  return [...tools, ...tools.map((t) => mcpToolName(HUB_MCP_NAME, t))];
}

/** Whether the agent's `approvals.tools` name the write (any of its names). */
export function writeNeedsApproval(approvals: ApprovalsConfig | undefined, write: HubWrite, community: string | null): boolean {
  if (!approvals) return false;
  const needs = approvalRule(approvals.tools);
  return heldWriteNames(write, community).some(needs);
}

const text = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);

/** The write to keep from a body the gateway read (redacted), or why it cannot be kept (the model is told now, not after approval). */
export function heldWriteOf(write: HubWrite, fields: Record<string, unknown>): { write: HeldWrite } | { problem: string } {
  const content = text(fields.content);
  if (content === null || !content.trim()) return { problem: 'a post or comment needs a non-empty `content`' };
  if (write.kind === 'post') return { write: { kind: 'post', title: text(fields.title), content, community: text(fields.community) } };
  return { write: { kind: 'comment', postId: write.postId, content, parentId: text(fields.parent_id) } };
}

/** The request a held write becomes: its id from the agent and the key, its deadline from approvals.timeout. */
export function heldWriteRequest(p: { agent: string; approvals: ApprovalsConfig; write: HubWrite; held: HeldWrite; fields: Record<string, unknown>; redact: (text: string) => string; now: number }): ApprovalRequest {
  const { agent, approvals, write, held } = p;
  const id = approvalIdOf({ agent, idempotencyKey: write.idempotencyKey });
  const shown = Object.fromEntries(Object.entries(p.fields).filter(([k]) => k !== 'agent_id'));
  if (held.kind === 'comment') shown.post_id = held.postId;
  return {
    id,
    agent,
    createdAt: p.now,
    expiresAt: p.now + approvals.timeout,
    approvers: approvals.approvers,
    calls: [{ id: 'held_write', name: heldWriteNames(write, held.kind === 'post' ? held.community : null)[0]!, arguments: shownArguments(shown, p.redact) }],
    work: { kind: 'hub_write', write: held, idempotencyKey: write.idempotencyKey },
  };
}

/** What the gateway answers for a held write's request, as it stands now: 202 while it waits or once approved, 403 once denied. */
export function heldWriteAnswer(entry: ApprovalEntry): { status: 202; body: HeldWriteAnswer } | { status: 403; body: { detail: string; approval_id: string } } {
  const { request, decision } = entry;
  const what = request.work.kind === 'hub_write' && request.work.write.kind === 'comment' ? 'comment' : 'post';
  if (decision?.kind === 'denied') {
    return { status: 403, body: { approval_id: request.id, detail: `denied (approval ${request.id}, by ${decision.by})${decision.note ? `: ${decision.note}` : ''}; this ${what} is not made` } };
  }
  if (decision?.kind === 'approved') {
    return { status: 202, body: { held_for_approval: true, approval_id: request.id, status: 'approved', message: `approved (approval ${request.id}): warren makes this ${what} once as ${request.agent}, or has made it; do not send it again` } };
  }
  return {
    status: 202,
    body: {
      held_for_approval: true,
      approval_id: request.id,
      status: 'waiting',
      message: `held for approval (approval ${request.id}): this ${what} is not on the hub yet; warren makes it once as ${request.agent} if a person approves it before ${new Date(request.expiresAt).toISOString()}, and not at all if they deny it. Do not send it again: go on with your work and say in your answer that it waits for approval.`,
    },
  };
}
