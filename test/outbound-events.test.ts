// Outbound events through the real daemon: an activation's end is POSTed to a loopback receiver, signed with the
// agent's events secret; a 500 is retried from the events queue with the same event id; a receiver that never
// takes it leaves a dead letter; the secret is in no log.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { OutboundEvents, type WarrenEvent } from '../activation/outbound-events.ts';
import { signatureMatches } from '../policy/hub-signature.ts';
import { TaskInbox } from '../scheduler/task-inbox.ts';
import { waitFor } from './support/hub-api.ts';
import { makeAgentsDir, startHarness, type Harness } from './support/daemon-harness.ts';
import { startFakeOpenAI } from './fakes/openai-server.ts';
import { warrenCli } from './support/warren-cli.ts';
import { PROCESS_TEST_MS } from './support/ceilings.ts';
import type { DeadLetter } from '../activation/outbound-events.ts';
import { ActivationRecords } from '../activation/activation-records.ts';

const redisUrl = inject('redisUrl');
const SECRET = `evsec-canary-${randomUUID()}`;
let h: Harness | undefined;
const servers: Server[] = [];
const conns: Redis[] = [];
afterEach(async () => {
  await h?.stop();
  h = undefined;
  for (const s of servers.splice(0)) await new Promise((r) => s.close(r));
  for (const c of conns.splice(0)) await c.quit();
});

interface Received {
  status: number;
  id: string | undefined;
  signed: boolean;
  event: WarrenEvent;
}

/** A receiver answering `statuses` in turn for each event id (the last one for ever after), recording what came. */
async function receiver(statuses: number[]): Promise<{ url: string; got: Received[] }> {
  const got: Received[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const id = req.headers['x-warren-event-id'] as string | undefined;
      const status = statuses[Math.min(got.filter((g) => g.id === id).length, statuses.length - 1)]!;
      got.push({ status, id, signed: signatureMatches(SECRET, body, req.headers['x-hub-signature-256'] as string), event: JSON.parse(body.toString()) as WarrenEvent });
      res.writeHead(status).end();
    });
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/events`, got };
}

const clerk = (url: string): string => `name: clerk
type: llm
brain: {provider: scripted, model: m, responses: ["Done."]}
capabilities: {grants: [hub:read]}
events:
  urls: ["${url}"]
  secret_env: CLERK_EVENTS_SECRET
`;

/** An agent whose posts need approval (README "Approvals"): its model calls hub_post at once. */
const announcer = (url: string): string => `name: announcer
type: llm
brain:
  provider: scripted
  model: m
  responses:
    - tool_calls: [{name: hub_post, arguments: {title: News, content: "We released 2.0."}}]
    - Announced.
capabilities: {grants: [hub:read, hub:write]}
approvals: {tools: [hub_post]}
events:
  urls: ["${url}"]
  secret_env: CLERK_EVENTS_SECRET
`;

async function start(url: string, attempts: number): Promise<{ inbox: TaskInbox; redis: Redis }> {
  h = await startHarness({
    redisUrl,
    agentsDir: makeAgentsDir({ clerk: { config: clerk(url), prompt: 'You are a clerk.' }, announcer: { config: announcer(url), prompt: 'You announce.' } }, { withGreeter: false }),
    env: { CLERK_EVENTS_SECRET: SECRET },
    config: (c) => {
      c.scheduler.exploration_interval = 3_600_000;
      c.events.retry_base = 100;
      c.events.attempts = attempts;
    },
  });
  const redis = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
  conns.push(redis);
  return { inbox: new TaskInbox(redis, h.prefix), redis };
}

const task = () => ({ id: `webhook:deploys:${randomUUID()}`, source: 'webhook' as const, name: 'deploys', text: 'Summarise.', createdAt: Date.now() });

describe('outbound events', () => {
  it('an activation.finished event arrives signed, is retried after a 500, and keeps one event id', async () => {
    const r = await receiver([500, 200]);
    const { inbox } = await start(r.url, 5);
    await inbox.add('clerk', task());
    const answered = await waitFor('the task answered', () => h!.outcomes.find((o) => o.trigger === 'task' && o.outcome.kind === 'answered'), 60_000);
    const activationId = answered.activationId;
    // Other activations (a task round that found the task taken) send events of their own ids: only this one's counts.
    const ofTask = (): Received[] => r.got.filter((g) => g.id === `activation.finished:${activationId}`);
    await waitFor('the event taken after a retry', () => ofTask().some((g) => g.status === 200) || undefined, 60_000);
    const finished = ofTask();
    expect(finished.map((g) => g.status)).toEqual([500, 200]);
    expect(finished.every((g) => g.signed)).toBe(true);
    expect(new Set(finished.map((g) => g.id)).size).toBe(1);
    expect(finished[0]!.id).toBe(`activation.finished:${activationId}`);
    expect(finished[0]!.event).toMatchObject({ id: finished[0]!.id, agent: 'clerk', data: { activation_id: activationId, trigger: 'task', outcome: 'answered' } });
    expect(h!.logs.join('\n')).not.toContain(SECRET);
  });

  it('a call that waits for approval sends approval.requested, signed, naming the request and the tool', async () => {
    const r = await receiver([200]);
    const { inbox } = await start(r.url, 5);
    await inbox.add('announcer', { ...task(), text: 'Announce the 2.0 release.' });
    const paused = await waitFor('the run paused', () => h!.outcomes.find((o) => o.agent === 'announcer' && o.outcome.kind === 'awaiting_approval'), 60_000);
    const got = await waitFor('the approval.requested event', () => r.got.find((g) => g.event.type === 'approval.requested'), 60_000);
    expect(got.signed).toBe(true);
    expect(got.event).toMatchObject({ type: 'approval.requested', agent: 'announcer', data: { tools: ['hub_post'], kind: 'loop' } });
    const approvalId = (got.event.data as { approval_id: string }).approval_id;
    expect(approvalId).toMatch(/^ap_/);
    expect(got.id).toBe(`approval.requested:${approvalId}`);
    expect(paused.posts).toBe(0);
  });

  it('a receiver that never takes the event leaves a dead letter after the bounded attempts', async () => {
    const r = await receiver([503]);
    const { inbox, redis } = await start(r.url, 2);
    await inbox.add('clerk', task());
    const reader = new OutboundEvents({ connection: redis, prefix: h!.prefix, fleetTargets: () => [], agentTargets: () => [], secrets: { get: () => undefined }, learnSecret: () => {}, attempts: 1, retryBaseMs: 1, logger: pino({ level: 'silent' }) });
    try {
      await waitFor('the task activation', () => h!.outcomes.find((o) => o.trigger === 'task' && o.outcome.kind === 'answered'), 60_000);
      const eventId = `activation.finished:${h!.outcomes.find((o) => o.trigger === 'task' && o.outcome.kind === 'answered')!.activationId}`;
      const dead = await waitFor('the dead letter', async () => (await reader.deadLetters()).find((d) => d.eventId === eventId), 60_000);
      expect(dead).toMatchObject({ url: r.url, attempts: 2, reason: `${r.url} answered 503` });
      expect(r.got.filter((g) => g.id === eventId)).toHaveLength(2);
      await waitFor('the dead letter logged', () => h!.logs.some((l) => l.includes('outbound event given up')) || undefined, 10_000);
    } finally {
      await reader.close();
    }
  });

  it('the fleet URL gets activation.failed and agent.paused of a failing agent; dead letters are listed and sent again by the CLI', async () => {
    const fleetSecret = `fleet-canary-${randomUUID()}`;
    // Two refusals per event, then taken: with two attempts each event becomes a dead letter first.
    const got: Received[] = [];
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks);
        const id = req.headers['x-warren-event-id'] as string | undefined;
        const status = got.filter((g) => g.id === id).length < 2 ? 503 : 200;
        got.push({ status, id, signed: signatureMatches(fleetSecret, body, req.headers['x-hub-signature-256'] as string), event: JSON.parse(body.toString()) as WarrenEvent });
        res.writeHead(status).end();
      });
    });
    servers.push(server);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/fleet-events`;
    const fake = await startFakeOpenAI();
    fake.setResponder(() => ({ error: { status: 404, message: "The model 'gpt-typo' does not exist.", code: 'model_not_found' } }));
    try {
      h = await startHarness({
        redisUrl,
        agentsDir: makeAgentsDir({ scout: { config: `name: scout\ntype: llm\nbrain: {provider: openai, model: gpt-typo, api_base: "${fake.url}", api_key_env: SCOUT_KEY}\ncapabilities: {grants: [hub:read]}\n`, prompt: 'You are scout.' } }, { withGreeter: false }),
        env: { SCOUT_KEY: 'sk-scout-0123456789', FLEET_EVENTS_SECRET: fleetSecret },
        config: (c) => {
          c.scheduler.exploration_interval = 3_600_000;
          c.events.urls = [url];
          c.events.secret_env = 'FLEET_EVENTS_SECRET';
          c.events.retry_base = 100;
          c.events.attempts = 2;
        },
      });
      const harness = h;
      const conn = new Redis(redisUrl);
      conns.push(conn);
      const inbox = new TaskInbox(conn, harness.prefix);
      await inbox.add('scout', task());
      // A failure is told by its record (an outcome is told of activations that end without throwing).
      const records = new ActivationRecords(conn, harness.prefix);
      const failed = await waitFor('the failed activation', async () => (await records.recent({ agent: 'scout' })).find((r) => r.outcome === 'terminal_failure'), 60_000);
      const failedId = failed.activation_id;
      const ids = [`activation.failed:${failedId}`, `agent.paused:${failedId}`];
      const cli = (args: string[]): ReturnType<typeof warrenCli> => warrenCli({ hubUrl: harness.hub.url, redisUrl, prefix: harness.prefix, agentsDir: harness.agentsDir }, args);
      const dead = await waitFor('both events dead letters', async () => {
        const r = await cli(['events', 'dead-letters', '--json']);
        const letters = JSON.parse(r.stdout || '[]') as DeadLetter[];
        return ids.every((id) => letters.some((d) => d.eventId === id)) ? letters : undefined;
      }, 60_000);
      expect(dead.find((d) => d.eventId === ids[0])).toMatchObject({ type: 'activation.failed', agent: 'scout', url, attempts: 2, reason: `${url} answered 503` });
      const failedEvent = got.find((g) => g.id === ids[0])!.event;
      expect(failedEvent).toMatchObject({ type: 'activation.failed', agent: 'scout', data: { activation_id: failedId, outcome: 'terminal_failure' } });
      expect(got.find((g) => g.id === ids[1])!.event).toMatchObject({ type: 'agent.paused', agent: 'scout', data: { activation_id: failedId, until: expect.any(String) as string } });
      expect(got.every((g) => g.signed)).toBe(true);
      expect((await cli(['events', 'dead-letters'])).stdout).toContain(`${ids[0]}  scout  ${url}  after 2 attempts: ${url} answered 503`);

      // Sent again: one event id, then the rest; each arrives a third time, with its first id, and is taken.
      expect((await cli(['events', 'retry', ids[0]!])).stdout).toContain('1 dead letter queued again');
      await waitFor('the retried event taken', () => got.some((g) => g.id === ids[0] && g.status === 200) || undefined, 60_000);
      expect((await cli(['events', 'retry', '--all'])).stdout).toMatch(/[1-9]\d* dead letters? queued again/);
      await waitFor('the rest taken', () => got.some((g) => g.id === ids[1] && g.status === 200) || undefined, 60_000);
      expect(got.filter((g) => g.id === ids[0]).map((g) => g.status)).toEqual([503, 503, 200]);
      const unknown = await cli(['events', 'retry', 'activation.failed:nope']);
      expect(unknown.code).toBe(1);
      expect(unknown.stderr).toContain('no dead letter with event id activation.failed:nope');
      expect((await cli(['events', 'retry'])).stderr).toContain('name one event id, or --all');
      expect(harness.logs.join('\n')).not.toContain(fleetSecret);
    } finally {
      await fake.close();
    }
  }, PROCESS_TEST_MS);
});

