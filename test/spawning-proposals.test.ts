// Where propose_agent's calls are filed (activation/spawn-proposals.ts), on a real Redis: a proposal that passes is
// one approval request of kind spawn, whose id the call's idempotency key decides (a retried activation files it
// once); a taken name, a name another proposal waits with, and more than max_pending waiting are refused as the
// tool's result, and so is an agent without the switch. A decided proposal no longer counts against max_pending.
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { SpawnProposalDesk } from '../activation/spawn-proposals.ts';
import { ApprovalStore, type ApprovalRequest } from '../scheduler/approval-store.ts';
import type { AgentDefinition } from '../store/definition.ts';
import { LocalFolderStore } from '../store/local-store.ts';
import { parseDefinition } from '../store/parse-definition.ts';

const redisUrl = inject('redisUrl');
let redis: Redis;
beforeAll(() => {
  redis = new Redis(redisUrl);
});
afterAll(() => redis.disconnect());

async function proposer(spawning: string): Promise<AgentDefinition> {
  const shared = (await new LocalFolderStore('examples').load()).shared;
  const configText = `name: scout\ntype: llm\nbrain: {provider: scripted, model: s, responses: [hi]}\ncapabilities: {grants: [hub:read], ${spawning}}\n`;
  const { definition, problems } = parseDefinition({ folder: 'scout', configFile: 'scout/config.yaml', configText, promptFile: 'scout/system-prompt.md', promptText: 'You are {{name}}.' });
  if (!definition) throw new Error(problems.map((p) => p.message).join('; '));
  return { ...definition, shared };
}

describe('SpawnProposalDesk', () => {
  it('files once per call, refuses taken names and more than max_pending, and frees a place once decided', async () => {
    const store = new ApprovalStore(redis, `warren-test-${randomUUID().slice(0, 8)}`);
    const requested: ApprovalRequest[] = [];
    const desk = new SpawnProposalDesk({ approvals: store, nameTaken: (n) => n === 'greeter', redact: (t) => t.replaceAll('sk-canary-1234', '[redacted]'), onRequested: (r) => requested.push(r) });
    const scout = await proposer('spawning: {can_propose: true, allowed_templates: [researcher], max_pending: 1}');
    const call = (name: string, key: string) => desk.propose({ proposer: scout, call: { template: 'researcher', name, purpose: `Reads about ${name}; not sk-canary-1234.`, overrides: {} }, callId: 'c1', idempotencyKey: key });

    const first = await call('rust-reader', 'act-1:1:1');
    expect(first.status).toBe('ok');
    expect(await call('rust-reader', 'act-1:1:1')).toEqual(first); // the same call retried
    expect(requested).toHaveLength(1);
    const [entry] = await store.open();
    expect(entry!.request.work).toMatchObject({ kind: 'spawn', name: 'rust-reader', template: 'researcher' });
    expect(JSON.stringify(entry)).not.toContain('sk-canary-1234');

    expect((await call('greeter', 'act-2:1:1')).content).toContain('name "greeter" is taken');
    expect((await call('rust-reader', 'act-2:1:2')).content).toContain('name "rust-reader" is taken');
    expect((await call('go-reader', 'act-2:1:3')).content).toContain('at most 1: capabilities.spawning.max_pending');
    await store.decide(entry!.request.id, 'denied', { by: 'admin' });
    expect((await call('go-reader', 'act-3:1:1')).status).toBe('ok');
    expect(requested.map((r) => r.work.kind === 'spawn' && r.work.name)).toEqual(['rust-reader', 'go-reader']);

    // Without max_pending: three waiting at once (the default), the fourth refused.
    const plain = await proposer('spawning: {can_propose: true, allowed_templates: [researcher]}');
    const byPlain = (name: string) => desk.propose({ proposer: { ...plain, name: 'plain-scout' }, call: { template: 'researcher', name, purpose: 'Reads.', overrides: {} }, callId: 'c1', idempotencyKey: `act-plain:${name}` });
    for (const name of ['a-reader', 'b-reader', 'c-reader']) expect((await byPlain(name)).status).toBe('ok');
    expect((await byPlain('d-reader')).content).toContain('you have 3 proposals waiting for a decision already (at most 3: capabilities.spawning.max_pending)');

    const off = await proposer('spawning: {can_propose: false, allowed_templates: [researcher]}');
    expect((await desk.propose({ proposer: off, call: { template: 'researcher', name: 'zig-reader', purpose: 'x', overrides: {} }, callId: 'c1', idempotencyKey: 'act-4:1:1' })).content).toContain('may not propose agents');
  });
});
