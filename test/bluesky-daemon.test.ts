// warren on Bluesky, end to end: real daemon processes (`warren start`) against the AT Protocol reference network
// (@atproto/dev-env's TestNetwork: PLC, PDS with its rate limits, AppView) and the fake OpenAI server.
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { AtpAgent } from '@atproto/api';
import { Redis } from 'ioredis';
import { BlueskyAdapter } from '../hub-client/bluesky/adapter.ts';
import { HubError } from '../hub-client/errors.ts';
import { startFakeOpenAI, type FakeOpenAI } from './fakes/openai-server.ts';
import { makeAgentsDir } from './support/daemon-harness.ts';
import { waitFor } from './support/hub-api.ts';
import { startWarren, type DaemonSettings, type WarrenProcess } from './support/warren-process.ts';
import { PROCESS_START_MS, PROCESS_TEST_MS } from './support/ceilings.ts';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WarrenConfigSchema } from '../services/config.ts';
import { formatCheck, runDoctor } from '../daemon/commands/doctor.ts';
import { postWithFacets, startBlueskyNetwork, type BlueskyNetwork } from './support/bluesky-network.ts';

const redisUrl = inject('redisUrl');
let model: FakeOpenAI;
let net: BlueskyNetwork;
let human: AtpAgent;
const procs: WarrenProcess[] = [];

// Starting the network (and, once per install, building its SQLite module) takes a while.
beforeAll(async () => {
  model = await startFakeOpenAI({ defaultReply: 'Four, as it happens.' });
  net = await startBlueskyNetwork(['human.test', 'pinchy.test', 'snappy.test', 'crabby.test', 'shelly.test', 'clawd.test', 'kelp.test', 'reef.test', 'coral.test', 'krill.test']);
  human = await net.login('human.test');
}, 600_000);
afterAll(async () => {
  await net?.stop();
  await model?.close();
}, 60_000);
afterEach(async () => {
  if (process.env.BSKY_LOGS) (await import('node:fs')).writeFileSync(process.env.BSKY_LOGS, procs.map((p) => p.lines.join('\n')).join('\n=====\n'));
  for (const p of procs.splice(0)) {
    p.kill('SIGKILL');
    await p.exited;
  }
  model.reset();
});

const lobster = (name: string, extra = ''): string => `name: ${name}
description: A friendly lobster on Bluesky.
type: llm
brain:
  provider: openai
  model: fake-gpt
  api_base: ${model.url}
  api_key_env: MODEL_KEY
capabilities:
  grants: [hub:read, hub:write]
behavior: {limits: {min_interval_seconds: 0, max_responses_per_thread: 100}${extra ? `, ${extra}` : ''}}
`;

function settings(agent: string, extra = '', more: { agent?: string; behavior?: string; scheduler?: string } = {}): DaemonSettings {
  const a = net.accounts[agent]!;
  return {
    ...(more.scheduler ? { scheduler: more.scheduler } : {}),
    hubUrl: '',
    adminKey: '',
    redisUrl,
    prefix: `warren-bsky-${agent}-${Date.now()}`,
    agentsDir: makeAgentsDir({ [agent]: { config: lobster(agent, more.behavior) + (more.agent ?? ''), prompt: 'You are {{name}}.' } }, { withGreeter: false }),
    hub: `hub: {type: bluesky, url: "${net.pds}", agents: {${agent}: {handle: ${a.handle}, password_env: BSKY_PASSWORD}}${extra}}`,
    env: { BSKY_PASSWORD: a.password, MODEL_KEY: 'sk-model' },
  };
}

interface ThreadPost {
  uri: string;
  cid: string;
  author: { handle: string };
  record: { text?: string; facets?: Facet[]; reply?: { root: { uri: string }; parent: { uri: string } } };
}

interface Facet {
  index: { byteStart: number; byteEnd: number };
  features: Array<{ $type: string; did?: string; uri?: string }>;
}

/** Every post in the thread of `uri`, as the human's AppView shows it. */
async function threadPosts(uri: string): Promise<ThreadPost[]> {
  // Not indexed by the AppView yet: nothing to show so far (the waits ask again).
  const res = await human.getPostThread({ uri, depth: 20 }).catch((err: unknown) => {
    if ((err as { error?: string }).error === 'NotFound') return undefined;
    throw err;
  });
  if (!res) return [];
  const out: ThreadPost[] = [];
  const walk = (n: { post?: ThreadPost; replies?: unknown[] }): void => {
    if (n.post) out.push(n.post);
    for (const r of n.replies ?? []) walk(r as { post?: ThreadPost; replies?: unknown[] });
  };
  walk(res.data.thread as { post?: ThreadPost; replies?: unknown[] });
  return out;
}

const repliesBy = async (handle: string, uri: string): Promise<ThreadPost[]> => (await threadPosts(uri)).filter((p) => p.author.handle === handle);

/** Posts in `did`'s repository, straight from the PDS (what exists, whatever the AppView shows). */
async function recordsOf(did: string): Promise<Array<{ uri: string; value: { text?: string; reply?: { parent: { uri: string } } } }>> {
  const res = await human.com.atproto.repo.listRecords({ repo: did, collection: 'app.bsky.feed.post', limit: 100 });
  return res.data.records;
}

describe('warren on bluesky (a real TestNetwork)', () => {
  it('answers a mention in the mentioner\'s thread, then a reply to its reply in the same thread', { timeout: PROCESS_TEST_MS }, async () => {
    procs.push(startWarren(settings('pinchy')));
    const mention = await postWithFacets(human, 'Hello @pinchy.test, what is 2+2?');
    const first = await waitFor('pinchy\'s reply', async () => (await repliesBy('pinchy.test', mention.uri))[0], PROCESS_START_MS + 30_000, 250);
    expect(first.record.text).toBe('Four, as it happens.');
    expect(first.record.reply).toMatchObject({ root: { uri: mention.uri }, parent: { uri: mention.uri } });

    model.enqueue('Still four.');
    const again = await postWithFacets(human, 'Are you sure?', { root: mention, parent: { uri: first.uri, cid: first.cid } });
    const second = await waitFor('pinchy\'s second reply', async () => (await repliesBy('pinchy.test', mention.uri)).find((p) => p.record.reply?.parent.uri === again.uri), 30_000, 250);
    expect(second.record.text).toBe('Still four.');
    expect(second.record.reply?.root.uri).toBe(mention.uri);
    // The model saw the thread: the human's question and pinchy's own first answer.
    const asked = model.requests.filter((r) => r.path.includes('/chat/completions')).at(-1)!.rawBody;
    expect(asked).toContain('Are you sure?');
    expect(asked).toContain('Four, as it happens.');
    await sleep(1_500); // more polls: nothing more to answer
    expect(await repliesBy('pinchy.test', mention.uri)).toHaveLength(2);
  });

  it('loses no notification that arrives while an activation runs (updateSeen only up to what was handled)', { timeout: PROCESS_TEST_MS }, async () => {
    const did = net.accounts.snappy!.did;
    let held = 0;
    model.setResponder(() => (held++ === 0 ? { content: 'First answer.', delay_ms: 4_000 } : 'Second answer.'));
    procs.push(startWarren(settings('snappy')));
    const a = await postWithFacets(human, 'First question for @snappy.test');
    await waitFor('the first model call', () => (model.requests.some((r) => r.path.includes('/chat/completions')) ? true : undefined), PROCESS_START_MS + 30_000, 50);
    const b = await postWithFacets(human, 'Second question for @snappy.test, asked meanwhile');
    await waitFor('both answered', async () => {
      const recs = await recordsOf(did);
      return recs.some((r) => r.value.reply?.parent.uri === a.uri) && recs.some((r) => r.value.reply?.parent.uri === b.uri) ? true : undefined;
    }, 60_000, 250);
    await sleep(1_500);
    const recs = await recordsOf(did);
    expect(recs.filter((r) => r.value.reply?.parent.uri === a.uri)).toHaveLength(1);
    expect(recs.filter((r) => r.value.reply?.parent.uri === b.uri)).toHaveLength(1);
    // The account's read state was moved to what was handled: nothing is left unread.
    const snappy = await net.login('snappy.test');
    const unread = await snappy.app.bsky.notification.getUnreadCount({});
    expect(unread.data.count).toBe(0);
  });

  it('gives exactly one reply when the daemon is SIGKILLed mid-reply', { timeout: PROCESS_TEST_MS }, async () => {
    const did = net.accounts.crabby!.did;
    const s = settings('crabby');
    procs.push(startWarren(s));
    const mention = await postWithFacets(human, 'Quick one, @crabby.test: are you there?');
    // Killed the moment the reply exists on the PDS: the notification is not handled yet.
    await waitFor('the reply record', async () => ((await recordsOf(did)).some((r) => r.value.reply?.parent.uri === mention.uri) ? true : undefined), PROCESS_START_MS + 30_000, 5);
    procs[0]!.kill('SIGKILL');
    expect(await procs[0]!.exited).toBe('SIGKILL');
    procs.push(startWarren(s));
    // The restarted daemon takes the notification up again, finds its reply under the kept record key, and reads it.
    const crabby = await net.login('crabby.test');
    await waitFor('the notification read', async () => ((await crabby.app.bsky.notification.getUnreadCount({})).data.count === 0 ? true : undefined), PROCESS_START_MS + 30_000, 250).catch((err: unknown) => {
      // What the daemons did, for whoever reads a failure.
      const said = procs.flatMap((p) => p.lines).filter((l) => /"level":[3-6]0|Bluesky notifications/.test(l) && !l.includes('intake round')).slice(-40).join('\n');
      throw new Error(`${(err as Error).message}\n${said}`);
    });
    await sleep(1_500);
    const replies = (await recordsOf(did)).filter((r) => r.value.reply?.parent.uri === mention.uri);
    expect(replies).toHaveLength(1);
  });

  it('keeps two daemons on one Redis within one account\'s write budget', { timeout: PROCESS_TEST_MS }, async () => {
    const did = net.accounts.shelly!.did;
    // 12 posts a minute, a burst of 2: four replies cannot all come within the first ten seconds.
    const s = settings('shelly', ', writes_per_minute: 12');
    procs.push(startWarren(s), startWarren(s));
    const mentions = [];
    for (let i = 0; i < 4; i++) mentions.push(await postWithFacets(human, `Question ${i} for @shelly.test`));
    await waitFor('four replies', async () => ((await recordsOf(did)).length >= 4 ? true : undefined), PROCESS_START_MS + 60_000, 250);
    await sleep(1_000);
    const recs = await recordsOf(did);
    expect(recs).toHaveLength(4);
    for (const m of mentions) expect(recs.filter((r) => r.value.reply?.parent.uri === m.uri)).toHaveLength(1);
    // Record keys are TIDs of when each write was first tried; createdAt is when it was sent.
    const times = (await Promise.all(recs.map(async (r) => {
      const rkey = r.uri.split('/').pop()!;
      const got = await human.com.atproto.repo.getRecord({ repo: did, collection: 'app.bsky.feed.post', rkey });
      return Date.parse((got.data.value as { createdAt: string }).createdAt);
    }))).sort((x, y) => x - y);
    // A token every 5 s after a burst of 2, shared by both daemons: write n (0-based) no sooner than (n-1)·5 s after the first.
    for (let n = 2; n < times.length; n++) expect(times[n]! - times[0]!).toBeGreaterThanOrEqual((n - 1) * 5_000 - 1_000);
  });

  it('warren doctor logs each account in: a good app password, a wrong one, one from a file, none', { timeout: 60_000 }, async () => {
    const secretsDir = mkdtempSync(join(tmpdir(), 'warren-bsky-secrets-'));
    writeFileSync(join(secretsDir, 'crabby-app-password'), `${net.accounts.crabby!.password}\n`);
    const config = WarrenConfigSchema.parse({
      hub: {
        type: 'bluesky',
        url: net.pds,
        agents: {
          pinchy: { handle: 'pinchy.test', password_env: 'BSKY_PINCHY' },
          snappy: { handle: 'snappy.test', password_env: 'BSKY_SNAPPY' },
          crabby: { handle: 'crabby.test', password_file: 'crabby-app-password' },
          shelly: { handle: 'shelly.test', password_env: 'BSKY_SHELLY' },
        },
      },
      redis: { url: redisUrl },
      store: { path: mkdtempSync(join(tmpdir(), 'warren-doctor-bsky-')) },
      secrets: { dir: secretsDir },
    });
    const wrong = 'not-the-password-canary-7f3a';
    const checks = await runDoctor(config, { PATH: process.env.PATH, BSKY_PINCHY: net.accounts.pinchy!.password, BSKY_SNAPPY: wrong }).finally(() => rmSync(secretsDir, { recursive: true, force: true }));
    const by = (area: string) => checks.find((c) => c.area === area);
    expect(by('bluesky pinchy')).toMatchObject({ status: 'ok', message: `pinchy.test logs in on ${net.pds} as ${net.accounts.pinchy!.did}` });
    expect(by('bluesky crabby')).toMatchObject({ status: 'ok' });
    expect(by('bluesky snappy')).toMatchObject({ status: 'fail', message: expect.stringContaining('cannot log in') as unknown });
    expect(by('bluesky shelly')).toMatchObject({ status: 'fail', message: expect.stringContaining('no app password') as unknown });
    const printed = checks.map(formatCheck).join('\n');
    for (const secret of [wrong, net.accounts.pinchy!.password, net.accounts.crabby!.password]) expect(printed).not.toContain(secret);
  });
});

describe('warren on bluesky: what its posts look like, and exploration (a real TestNetwork)', () => {
  it('replies with facets for a mention and a link (UTF-8 byte offsets, the handle resolved to its DID), so they notify and link', { timeout: PROCESS_TEST_MS }, async () => {
    // Non-ASCII before both: character offsets would differ from the byte offsets the protocol wants.
    const answer = 'Grüße! Ask @human.test, or read https://example.com/molting for more.';
    model.setResponder(() => answer);
    procs.push(startWarren(settings('clawd')));
    const mention = await postWithFacets(human, 'Hey @clawd.test, where do I read about molting?');
    const reply = await waitFor('clawd\'s reply', async () => (await repliesBy('clawd.test', mention.uri))[0], PROCESS_START_MS + 30_000, 250);
    expect(reply.record.text).toBe(answer);
    const bytes = Buffer.from(answer, 'utf8');
    const at = (needle: string): { byteStart: number; byteEnd: number } => {
      const start = bytes.indexOf(Buffer.from(needle, 'utf8'));
      return { byteStart: start, byteEnd: start + Buffer.byteLength(needle, 'utf8') };
    };
    // (A facet's own `$type` is optional in the lexicon; @atproto/api writes it on some.)
    const facets = (reply.record.facets ?? []).map((f) => ({ index: f.index, features: f.features })).sort((x, y) => x.index.byteStart - y.index.byteStart);
    expect(facets).toEqual([
      { index: at('@human.test'), features: [{ $type: 'app.bsky.richtext.facet#mention', did: net.accounts.human!.did }] },
      { index: at('https://example.com/molting'), features: [{ $type: 'app.bsky.richtext.facet#link', uri: 'https://example.com/molting' }] },
    ]);
    // The facet is what notifies: the human is told of a mention by clawd (a reply that @-mentions its parent's
    // author arrives as a mention).
    const told = await waitFor('the human notified', async () => {
      const res = await human.app.bsky.notification.listNotifications({ limit: 50 });
      return res.data.notifications.find((n) => n.uri === reply.uri);
    }, 30_000, 250);
    expect(told.reason).toBe('mention');
  });

  it('answers with more than 300 graphemes as a reply chain in the human\'s thread, each part within the limit', { timeout: PROCESS_TEST_MS }, async () => {
    const words = Array.from({ length: 130 }, (_, i) => `molt${i}`);
    const answer = words.join(' '); // about 900 graphemes
    model.setResponder(() => answer);
    procs.push(startWarren(settings('kelp')));
    const mention = await postWithFacets(human, 'Tell me everything, @kelp.test.');
    const parts = await waitFor('the whole chain', async () => {
      const mine = await repliesBy('kelp.test', mention.uri);
      return mine.map((p) => p.record.text ?? '').join(' ') === answer ? mine : undefined;
    }, PROCESS_START_MS + 60_000, 250);
    expect(parts.length).toBeGreaterThanOrEqual(3);
    const segmenter = new Intl.Segmenter(undefined, { granularity: 'grapheme' });
    for (const p of parts) expect([...segmenter.segment(p.record.text ?? '')].length).toBeLessThanOrEqual(300);
    // A chain: the first answers the mention, each next one answers the part before it, all in the mention's thread.
    expect(parts[0]!.record.reply).toMatchObject({ root: { uri: mention.uri }, parent: { uri: mention.uri } });
    for (let i = 1; i < parts.length; i++) expect(parts[i]!.record.reply).toMatchObject({ root: { uri: mention.uri }, parent: { uri: parts[i - 1]!.uri } });
    await sleep(1_500); // more polls: the chain is not written again
    expect(await repliesBy('kelp.test', mention.uri)).toHaveLength(parts.length);
    expect(model.requests.filter((r) => r.path.includes('/chat/completions'))).toHaveLength(1);
  });

  it('explores from the agent\'s interests (a search for its keywords), answers a post once, and does not ask the model about it again', { timeout: PROCESS_TEST_MS }, async () => {
    const post = await postWithFacets(human, 'Who else spends low tide in the tidepools?');
    const other = await postWithFacets(human, 'Nothing to see here, just weather.');
    model.setResponder((r) => (r.rawBody.includes(post.uri) ? `REPLY TO ${post.uri}\nTidepools are the best nurseries.` : 'NO_ACTION'));
    const p = startWarren(settings('reef', '', {
      behavior: 'discovery: {enabled: true}',
      agent: 'interests: {keywords: [tidepools]}\n',
      scheduler: 'exploration_interval: 200ms, min_staleness: 0',
    }));
    procs.push(p);
    const reply = await waitFor('reef answered the post', async () => (await repliesBy('reef.test', post.uri))[0], PROCESS_START_MS + 30_000, 250);
    expect(reply.record.text).toBe('Tidepools are the best nurseries.');
    expect(reply.record.reply).toMatchObject({ root: { uri: post.uri }, parent: { uri: post.uri } });
    // Later rounds find the same post in the search, but it is answered: no more model calls about it.
    const explorations = (): number => new Set(p.lines.filter((l) => l.includes('"trigger":"exploration"')).map((l) => (JSON.parse(l) as { activation?: string }).activation)).size;
    const before = explorations();
    await waitFor('three more explorations', () => (explorations() >= before + 3 ? true : undefined), 60_000, 250);
    expect(model.requests.filter((r) => r.rawBody.includes(post.uri))).toHaveLength(1);
    expect(model.requests.some((r) => r.rawBody.includes(other.uri))).toBe(false); // not on its keywords
    expect(await repliesBy('reef.test', post.uri)).toHaveLength(1);
  });
});

describe('warren on bluesky: pacing from the PDS\'s own limits (a real TestNetwork)', () => {
  it('holds only the account whose logins the PDS refused, until its ratelimit-reset, not every account on the host', { timeout: 120_000 }, async () => {
    const coral = net.accounts.coral!;
    // Another client spent coral's logins of the five minutes (the PDS: 30 per 5 minutes per account and address).
    for (let i = 0; i < 30; i++) await new AtpAgent({ service: net.pds }).login({ identifier: coral.handle, password: coral.password });
    const redis = new Redis(redisUrl);
    const prefix = `warren-bsky-pace-${Date.now()}`;
    const accounts = new Map([['coral', { handle: coral.handle, password: coral.password }], ['krill', { handle: 'krill.test', password: net.accounts.krill!.password }]]);
    const hub = new BlueskyAdapter({ baseUrl: net.pds, accounts, redis, prefix, maxWaitMs: 5_000 });
    try {
      const refused = await hub.listNotifications('coral').catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(HubError);
      expect(refused).toMatchObject({ status: 429, retryable: true });
      // The hold is in Redis, for every daemon, until the reset the PDS named (minutes away).
      const held = Number(await redis.hget(`${prefix}:pace:bluesky:account:coral:login`, 'until'));
      expect(held - Date.now()).toBeGreaterThan(60_000);
      // coral is not asked to log in again meanwhile: held back locally at once, no request sent.
      const again = await hub.listNotifications('coral').catch((e: unknown) => e);
      expect(again).toMatchObject({ status: 429 });
      expect((again as Error).message).toMatch(/held back locally/);
      // krill, on the same host and Redis, goes on at once.
      const began = Date.now();
      await expect(hub.listNotifications('krill')).resolves.toMatchObject({ notifications: [] });
      expect(Date.now() - began).toBeLessThan(4_000);
    } finally {
      await redis.quit();
    }
  });
});

describe('warren on bluesky: a session the PDS will not refresh (a real TestNetwork)', () => {
  it('logs in again with the app password once the refresh token is revoked, instead of calling on unauthenticated', { timeout: 120_000 }, async () => {
    const reef = net.accounts.reef!;
    const redis = new Redis(redisUrl);
    const prefix = `warren-bsky-relogin-${Date.now()}`;
    const hub = new BlueskyAdapter({ baseUrl: net.pds, accounts: new Map([['reef', { handle: reef.handle, password: reef.password }]]), redis, prefix, maxWaitMs: 5_000 });
    try {
      await expect(hub.listNotifications('reef')).resolves.toMatchObject({ notifications: [] });
      const first = await hub.session('reef');
      // Revoke the session's refresh token on the PDS, then let the library try to refresh as it does when the access
      // token expires: the PDS refuses, and the library drops the session.
      await first.com.atproto.server.deleteSession(undefined, { headers: { authorization: `Bearer ${first.session!.refreshJwt}` } });
      await expect(first.sessionManager.refreshSession()).rejects.toThrow();
      expect(first.session).toBeUndefined();
      // The next call logs in again (a new session) and is answered.
      await expect(hub.listNotifications('reef')).resolves.toMatchObject({ notifications: [] });
      const second = await hub.session('reef');
      expect(second).not.toBe(first);
      expect(second.session?.did).toBe(reef.did);
    } finally {
      await redis.quit();
    }
  });
});

