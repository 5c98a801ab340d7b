// Every idempotency key warren sends, made in one place (policy/idempotency-keys.ts), as one table: what the key
// is for and what it is derived from in, the exact string out. The strings are those earlier versions sent: a
// write sent before an upgrade and retried after it must carry the same key, so a changed row is a broken replay.
import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../agent-loop/loop-guard.ts';
import {
  a2aContextId,
  a2aMessageId,
  activatedKey,
  activitySummaryKey,
  consumptionKey,
  errorPostKey,
  errorRepeatKey,
  explorationReplyKey,
  failureReplyKey,
  hubToolWriteKey,
  markReadKey,
  mcpToolCallKey,
  moltbookLedgerKey,
  notificationReplyKey,
  standaloneMcpRoot,
  toolCallKey,
} from '../policy/idempotency-keys.ts';

describe('idempotency keys', () => {
  it.each<[string, () => string, string]>([
    // [what, key made from, exact key]
    ['the hub told the agent ran', () => activatedKey('act-7-lx3'), 'warren:act-7-lx3:activated'],
    ['the usage of attempt 2', () => consumptionKey('act-7-lx3', 2), 'warren:act-7-lx3:consumption:2'],
    ['an exploration\'s reply to post p9', () => explorationReplyKey('act-7-lx3', 'p9'), 'warren:act-7-lx3:explore:p9:reply'],
    ['an error post', () => errorPostKey('act-7-lx3'), 'warren:act-7-lx3:error-post'],
    ['a repeat counted on an error post', () => errorRepeatKey('act-7-lx3'), 'warren:act-7-lx3:error-repeat'],
    ['the reply to notification n1, whichever activation sends it', () => notificationReplyKey('n1'), 'notification:n1:reply'],
    ['the could-not-answer line on notification n1, however often it fails', () => failureReplyKey('n1'), 'notification:n1:could-not-answer'],
    ['marking n1 and n2 read', () => markReadKey(['n1', 'n2']), 'warren:read:fe05e35052b0c58f37fe9a7465c59ca5'],
    ['marking n2 and n1 read: the same set, the same key', () => markReadKey(['n2', 'n1']), 'warren:read:fe05e35052b0c58f37fe9a7465c59ca5'],
    ['marking n1 read', () => markReadKey(['n1']), 'warren:read:676b8bb84ce7267dd520deca4811c8f1'],
    ['the loop\'s 2nd call of step 3', () => toolCallKey('act-7-lx3', 3, 2), 'act-7-lx3:3:2'],
    ['hub_reply from that call', () => hubToolWriteKey(toolCallKey('act-7-lx3', 3, 2)), 'warren:act-7-lx3:3:2'],
    ['a CLI\'s hub_post through warren mcp hub', () => mcpToolCallKey('act-7-lx3', 'hub_post', canonicalJson({ content: 'hi', community: 'm/general' })), 'act-7-lx3:mcp:hub_post:825bec9539328614ea10ba89d6549ee8'],
    ['the same arguments in another order', () => mcpToolCallKey('act-7-lx3', 'hub_post', canonicalJson({ community: 'm/general', content: 'hi' })), 'act-7-lx3:mcp:hub_post:825bec9539328614ea10ba89d6549ee8'],
    ['its hub write', () => hubToolWriteKey(mcpToolCallKey('act-7-lx3', 'hub_post', canonicalJson({ content: 'hi', community: 'm/general' }))), 'warren:act-7-lx3:mcp:hub_post:825bec9539328614ea10ba89d6549ee8'],
    ['a warren mcp hub started by hand, without an activation', () => standaloneMcpRoot('bee', 4242, 1_700_000_000_000), 'mcp-bee-4242-loyw3v28'],
    ['the Moltbook ledger of a comment given no key', () => moltbookLedgerKey('bee', 'p9', 'h1'), 'content:bee:p9:h1'],
    ['the Moltbook ledger of a post given no key', () => moltbookLedgerKey('bee', 'post', 'h1'), 'content:bee:post:h1'],
    ['the A2A message of a remote delegation from that call', () => a2aMessageId(toolCallKey('act-7-lx3', 3, 2)), 'warren:act-7-lx3:3:2:a2a'],
    ['the context its new remote task is opened in (a retry lists it)', () => a2aContextId(toolCallKey('act-7-lx3', 3, 2)), 'warren:act-7-lx3:3:2:a2a-context'],
    ['the activity summary of bee for the tick at 2026-11-27 00:00Z', () => activitySummaryKey('bee', Date.UTC(2026, 10, 27)), 'warren:activity-summary:bee:1795737600000'],
  ])('%s', (_what, make, key) => {
    expect(make()).toBe(key);
    expect(make()).toBe(make()); // never random: made again, the same key
  });
});
