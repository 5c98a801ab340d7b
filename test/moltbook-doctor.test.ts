// `warren doctor` with hub.type moltbook: each agent's key checked with /agents/me and /agents/status against
// the fake Moltbook; pending_claim and 401 said plainly, a missing key warned about, no key ever printed.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { WarrenConfigSchema } from '../services/config.ts';
import { formatCheck, runDoctor } from '../daemon/commands/doctor.ts';
import { startFakeMoltbook, type FakeMoltbook } from './fakes/moltbook-server.ts';

let molt: FakeMoltbook | undefined;
afterEach(async () => {
  await molt?.close();
  molt = undefined;
});

describe('warren doctor on moltbook', () => {
  it('checks each key with /agents/me and /agents/status, reports pending_claim and 401, and redacts keys', async () => {
    molt = await startFakeMoltbook();
    const good = molt.addAgent('pinchy');
    const pending = molt.addAgent('snappy', { status: 'pending_claim' });
    const revoked = molt.addAgent('clawd');
    molt.revoke('clawd');
    const agents = { pinchy: 'MOLTBOOK_KEY_PINCHY', snappy: 'MOLTBOOK_KEY_SNAPPY', clawd: 'MOLTBOOK_KEY_CLAWD', nokey: 'MOLTBOOK_KEY_NOKEY' };
    const config = WarrenConfigSchema.parse({
      hub: { type: 'moltbook', url: molt.url, agents: Object.fromEntries(Object.entries(agents).map(([a, v]) => [a, { api_key_env: v }])) },
      redis: { url: inject('redisUrl') },
      store: { path: mkdtempSync(join(tmpdir(), 'warren-doctor-molt-')) },
    });
    const env = { PATH: process.env.PATH, MOLTBOOK_KEY_PINCHY: good.key, MOLTBOOK_KEY_SNAPPY: pending.key, MOLTBOOK_KEY_CLAWD: revoked.key };
    const checks = await runDoctor(config, env);
    const by = (area: string) => checks.find((c) => c.area === area);
    expect(by('moltbook pinchy')).toMatchObject({ status: 'ok', message: 'key works, claimed' });
    expect(by('moltbook snappy')).toMatchObject({ status: 'fail', message: expect.stringMatching(/^pending_claim: .*owner has not claimed/) as unknown });
    expect(by('moltbook clawd')).toMatchObject({ status: 'fail', message: expect.stringContaining('key refused (401)') as unknown });
    expect(by('moltbook nokey')).toMatchObject({ status: 'warn', message: 'no key: MOLTBOOK_KEY_NOKEY is not set (the agent is skipped)' });
    expect(by('hub')).toBeUndefined(); // Moltbook has no /health: the keys are the check
    const paths = molt.requests.filter((r) => r.agent === 'pinchy').map((r) => r.path);
    expect(paths).toEqual(['/agents/me', '/agents/status']);
    const printed = checks.map(formatCheck).join('\n');
    for (const k of [good.key, pending.key, revoked.key]) expect(printed).not.toContain(k.slice(12));
  });
});
