// `warren approvals` as an operator runs it: a real subprocess against a private Redis with no daemon running.
// Requests are written as a paused run writes them (ApprovalStore); the command lists them, decides one with the
// admin key (the decision becomes the agent's task `approval:<id>`), tells a second decision what was decided
// (exit 2), and refuses an unknown id, a deny without a note, a missing admin key and an approver the agent does not
// take (exit 1, nothing decided). The admin key is checked, not only found: the hub refuses a wrong one; with the
// hub down, the key a real daemon recorded on the Redis decides, and with neither nothing is decided. The pure views
// are a table.
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { approvalListRows, approvalTable } from '../daemon/ops/approval-views.ts';
import { decisionMessage } from '../daemon/ops/approvals-command.ts';
import { startDaemon } from '../daemon/daemon.ts';
import { createLogger } from '../daemon/logger.ts';
import { startHub, type RunningHub } from '../local-hub/server.ts';
import { WarrenConfigSchema } from '../services/config.ts';
import { RedisKeys } from '../redis/keys.ts';
import { approvalIdOf, ApprovalStore, type ApprovalEntry, type ApprovalRequest } from '../scheduler/approval-store.ts';
import { PROCESS_TEST_MS } from './support/ceilings.ts';
import { startPrivateRedis, type PrivateRedis } from './support/redis-server.ts';
import { warrenCli, type CliTarget } from './support/warren-cli.ts';

let ADMIN: Record<string, string>;

function request(activationId: string, over: Partial<ApprovalRequest> = {}): ApprovalRequest {
  const now = Date.now();
  return {
    id: approvalIdOf({ activationId, step: 2 }),
    agent: 'poster',
    createdAt: now,
    expiresAt: now + 3_600_000,
    approvers: ['operator', 'admin'],
    calls: [{ id: 'c1', name: 'hub_post', arguments: '{"content":"hello world"}' }],
    work: { kind: 'loop', activationId, system: 'sys', state: '{}', origin: { kind: 'exploration', feedPostIds: [] } },
    ...over,
  };
}

let redis: PrivateRedis;
let conn: Redis;
let target: CliTarget;
let store: ApprovalStore;
let hub: RunningHub;

beforeAll(async () => {
  redis = await startPrivateRedis();
  conn = new Redis(redis.url, { maxRetriesPerRequest: 1 });
  hub = await startHub({ dbPath: ':memory:', port: 0, adminKey: `admin-${randomUUID()}` });
  ADMIN = { WARREN_HUB_ADMIN_KEY: hub.adminKey };
  const root = mkdtempSync(join(tmpdir(), 'warren-approvals-cli-'));
  mkdirSync(join(root, 'agents'));
  target = { hubUrl: hub.url, redisUrl: redis.url, prefix: `approvals-cli-${Date.now()}`, agentsDir: join(root, 'agents') };
  store = new ApprovalStore(conn, target.prefix);
});

afterAll(async () => {
  await hub?.close();
  conn?.disconnect();
  await redis?.stop();
});

const cli = (args: string[], env: Record<string, string> = ADMIN) => warrenCli(target, ['approvals', ...args], { WARREN_HUB_ADMIN_KEY: '', ...env });

describe('warren approvals, with no daemon running', () => {
  it('lists, approves once (the agent gets its task), tells a second decision what was decided, and lists done requests with --all', async () => {
    const r = request('act_cli_one');
    await store.create(r);
    const listed = await cli(['list', '--json']);
    expect(listed.code).toBe(0);
    expect(JSON.parse(listed.stdout)).toEqual([expect.objectContaining({ id: r.id, agent: 'poster', status: 'waiting', done: false, calls: [{ name: 'hub_post', arguments: '{"content":"hello world"}' }] })]);
    const table = await cli([]);
    expect(table.stdout).toContain(`${r.id}  poster  waiting, expires`);
    expect(table.stdout).toContain('hub_post {"content":"hello world"}');

    const approved = await cli(['approve', r.id, '--note', 'looks fine']);
    expect(approved).toMatchObject({ code: 0 });
    expect(approved.stdout).toContain(`${r.id} approved: agent poster goes on`);
    expect((await store.get(r.id))?.decision).toMatchObject({ kind: 'approved', by: 'admin', note: 'looks fine' });
    // The decision is the agent's task now: any daemon's scheduler round queues it.
    const keys = new RedisKeys(target.prefix);
    expect(await conn.zrange(keys.tasks('poster'), 0, -1)).toEqual([`approval:${r.id}`]);

    const again = await cli(['deny', r.id, '--note', 'changed my mind']);
    expect(again.code).toBe(2);
    expect(again.stdout).toMatch(new RegExp(`${r.id} was already approved by admin at \\S+ with the note "looks fine" \\(not denied: the first decision stands\\)`));
    expect((await store.get(r.id))?.decision?.kind).toBe('approved');
    // Still one task: handing the decision on again adds nothing.
    expect(await conn.zcard(keys.tasks('poster'))).toBe(1);

    await store.finish(r.id);
    expect(JSON.parse((await cli(['list', '--json'])).stdout)).toEqual([]);
    expect((await cli(['list'])).stdout).toContain('no approval requests are open');
    const all = JSON.parse((await cli(['list', '--all', '--json'])).stdout) as Array<{ id: string; done: boolean; status: string }>;
    expect(all).toEqual([expect.objectContaining({ id: r.id, status: 'approved', done: true })]);
  }, PROCESS_TEST_MS);

  it('denies with the note; refuses a deny without one, an unknown id, no admin key, an approver the agent does not take', async () => {
    const r = request('act_cli_two');
    await store.create(r);
    const noNote = await cli(['deny', r.id]);
    expect(noNote.code).toBe(1);
    expect(noNote.stderr).toContain('deny needs --note');
    const unknown = await cli(['approve', 'ap_nosuchrequest']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('no approval request ap_nosuchrequest is waiting');
    const keyless = await cli(['approve', r.id], {});
    expect(keyless.code).toBe(1);
    expect(keyless.stderr).toContain("deciding an approval takes the hub's admin key");
    expect((await store.get(r.id))?.decision).toBeUndefined();

    const denied = await cli(['deny', r.id, '--note', 'not on a Friday']);
    expect(denied.code).toBe(0);
    expect(denied.stdout).toContain(`${r.id} denied: agent poster goes on`);
    expect((await store.get(r.id))?.decision).toMatchObject({ kind: 'denied', by: 'admin', note: 'not on a Friday' });

    const operatorsOnly = request('act_cli_three', { approvers: ['operator'] });
    await store.create(operatorsOnly);
    const refused = await cli(['approve', operatorsOnly.id]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('takes decisions from operator only');
    expect((await store.get(operatorsOnly.id))?.decision).toBeUndefined();
  }, PROCESS_TEST_MS);

  it('refuses a wrong admin key: the hub refuses it; with the hub down, the key a daemon recorded decides; with neither, nothing is decided', async () => {
    const r = request('act_cli_four');
    await store.create(r);
    const wrong = await cli(['approve', r.id], { WARREN_HUB_ADMIN_KEY: `${hub.adminKey}-not` });
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toContain(`the admin key in WARREN_HUB_ADMIN_KEY is wrong: the hub at ${hub.url} refused it (403)`);
    expect((await store.get(r.id))?.decision).toBeUndefined();

    // The hub down and no daemon has run on this Redis prefix: the key cannot be checked.
    const down = { ...target, hubUrl: 'http://127.0.0.1:9' };
    const unchecked = await warrenCli(down, ['approvals', 'approve', r.id], ADMIN);
    expect(unchecked.code).toBe(1);
    expect(unchecked.stderr).toContain('cannot check the admin key in WARREN_HUB_ADMIN_KEY: the hub at http://127.0.0.1:9 gave no answer');
    expect((await store.get(r.id))?.decision).toBeUndefined();

    // A daemon ran with the hub's key (and stopped): its record checks the key while the hub is down.
    const config = WarrenConfigSchema.parse({
      hub: { url: hub.url, embedded: false },
      redis: { url: redis.url, prefix: target.prefix, allow_unauthenticated: true },
      store: { path: target.agentsDir },
      metrics: { enabled: false },
      workers: { shutdown_grace: '1s' },
    });
    const daemon = await startDaemon({ config, logger: createLogger({ level: 'silent' }), env: { WARREN_HUB_ADMIN_KEY: hub.adminKey }, hubMcp: null });
    await daemon.stop();
    const wrongOffline = await warrenCli(down, ['approvals', 'deny', r.id, '--note', 'no'], { WARREN_HUB_ADMIN_KEY: 'a-guess' });
    expect(wrongOffline.code).toBe(1);
    expect(wrongOffline.stderr).toContain("the admin key in WARREN_HUB_ADMIN_KEY is wrong: it is not the key the daemons on this Redis run with");
    expect((await store.get(r.id))?.decision).toBeUndefined();
    const right = await warrenCli(down, ['approvals', 'approve', r.id], ADMIN);
    expect(right).toMatchObject({ code: 0 });
    expect((await store.get(r.id))?.decision).toMatchObject({ kind: 'approved', by: 'admin' });
  }, PROCESS_TEST_MS);
});

describe('the views (pure)', () => {
  const entry = (id: string, decision?: ApprovalEntry['decision']): ApprovalEntry => ({ request: { ...request(id), id, expiresAt: 2_000 }, decision });
  const rows: Array<[string, ApprovalEntry[], ApprovalEntry[], number, string]> = [
    ['nothing open', [], [], 1_000, 'no approval requests are open\n'],
    ['waiting', [entry('a')], [], 1_000, 'a  poster  waiting, expires 1970-01-01T00:00:02.000Z'],
    ['timed out, not swept', [entry('a')], [], 3_000, 'a  poster  waiting (timed out: the next sweep denies it)'],
    ['decided, about to run', [entry('a', { kind: 'denied', note: 'no', by: 'operator', at: 1 })], [], 1_000, 'a  poster  denied by operator, about to run'],
    ['done', [], [entry('b', { kind: 'approved', note: '', by: 'timeout', at: 1 })], 1_000, 'b  poster  approved by timeout, done'],
    ['open wins over done', [entry('a')], [entry('a', { kind: 'approved', note: '', by: 'admin', at: 1 })], 1_000, 'a  poster  waiting'],
  ];
  it.each(rows)('%s', (_name, open, done, now, expected) => {
    const text = approvalTable(approvalListRows(open, done), now);
    expect(text).toContain(expected);
    expect(text.split('\n').filter((l) => /^\S/.test(l))).toHaveLength(Math.max(1, new Set([...open, ...done].map((e) => e.request.id)).size));
  });
  it('says what a decision asked for came to', () => {
    const e = entry('a', { kind: 'approved', note: '', by: 'operator', at: 0 });
    expect(decisionMessage('approved', { kind: 'already', entry: e as never })).toBe('a was already approved by operator at 1970-01-01T00:00:00.000Z');
    expect(decisionMessage('denied', { kind: 'decided', entry: { ...e, decision: { kind: 'denied', note: 'x', by: 'admin', at: 0 } } })).toBe('a denied: agent poster goes on in the next daemon that takes its work, and the model reads your note as the result of hub_post');
  });
});
