// `warren doctor` and remote (A2A) delegates: each card fetched, and a call made with the configured token to see
// whether the agent lets it in (a real SDK-built agent on loopback that refuses other tokens with 401).
import { join } from 'node:path';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { runDoctor } from '../daemon/commands/doctor.ts';
import { WarrenConfigSchema } from '../services/config.ts';
import { startA2aPeer, type A2aPeer } from './support/a2a-peer.ts';
import { makeAgentsDir } from './support/daemon-harness.ts';
import { freePort } from './support/free-port.ts';

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
});

const asker = (name: string, delegate: string): { config: string; prompt: string } => ({
  config: `name: ${name}\ntype: llm\nbrain: {provider: scripted, model: m, responses: [hi]}\ncapabilities:\n  grants: [a2a:echo]\n  delegates:\n    - ${delegate}\n`,
  prompt: 'You are {{name}}.',
});

// Doctor runs every check (CLI versions by subprocess, Redis, the hub): seconds on a quiet machine, more on a busy one.
describe('warren doctor: remote delegates', { timeout: 120_000 }, () => {
  it('ok with the right token, a failure naming the cause with a wrong or missing one, and for a card that cannot be read', async () => {
    const p: A2aPeer = await startA2aPeer({ token: 'the-right-token', name: 'Echo desk', behaviour: () => undefined });
    cleanups.push(() => p.close());
    const dead = `http://127.0.0.1:${await freePort()}/`;
    const dir = makeAgentsDir(
      {
        'with-token': asker('with-token', `{name: echo, card_url: "${p.url}", auth: {bearer_env: ECHO_TOKEN}}`),
        'wrong-token': asker('wrong-token', `{name: echo, card_url: "${p.url}", auth: {bearer_env: WRONG_TOKEN}}`),
        'no-token': asker('no-token', `{name: echo, card_url: "${p.url}"}`),
        unset: asker('unset', `{name: echo, card_url: "${p.url}", auth: {bearer_env: UNSET_TOKEN}}`),
        'no-card': asker('no-card', `{name: echo, card_url: "${dead}"}`),
      },
      { withGreeter: false },
    );
    const config = WarrenConfigSchema.parse({ hub: { url: 'http://127.0.0.1:9', embedded: false }, redis: { url: inject('redisUrl') }, store: { path: dir }, pauses: { file: join(dir, '..', 'pauses.json') } });
    const checks = await runDoctor(config, { PATH: process.env.PATH, ECHO_TOKEN: 'the-right-token', WRONG_TOKEN: 'nope' });
    const about = (agent: string) => checks.filter((c) => c.area === `agent ${agent}` && c.message.includes('remote delegate'));
    const card = 'card of "Echo desk" (1 skill, streaming)';
    expect(about('with-token')).toEqual([{ status: 'ok', area: 'agent with-token', message: `remote delegate echo of with-token: ${card}; calls with the token are let in` }]);
    expect(about('wrong-token')).toEqual([{ status: 'fail', area: 'agent wrong-token', message: `remote delegate echo of wrong-token: ${card}; it refuses the token (HTTP 401): check auth in capabilities.delegates` }]);
    expect(about('no-token')).toEqual([{ status: 'fail', area: 'agent no-token', message: `remote delegate echo of no-token: ${card}; it refuses calls without a token (HTTP 401): check auth in capabilities.delegates` }]);
    expect(about('unset')).toEqual([{ status: 'fail', area: 'agent unset', message: `remote delegate echo of unset: ${card}; its token variable UNSET_TOKEN (auth.bearer_env) is not set` }]);
    expect(about('no-card')[0]).toMatchObject({ status: 'fail', message: expect.stringContaining(`remote delegate echo of no-card cannot be reached: agent card ${dead}.well-known/agent-card.json: unreachable (ECONNREFUSED)`) as unknown });
    // The card is read once for all five agents (the cache), whatever each agent's token.
    expect(p.cardStatuses).toEqual([200]);
  });
});
