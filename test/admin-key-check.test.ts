// The admin key `warren approvals` decides with is checked, not only found (services/admin-key-check.ts): the
// verdict is a table; a real hub tells its admin key from any other value; the daemons' record on a real Redis
// matches its key and no other, keeps no trace of the key itself, and is not rewritten for the same key.
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startHub, type RunningHub } from '../local-hub/server.ts';
import { RedisKeys } from '../redis/keys.ts';
import { AdminKeyRecord, adminKeyVerdict, askHub, type HubAnswer, type RecordAnswer } from '../services/admin-key-check.ts';
import { freePort } from './support/free-port.ts';

const what = { hubUrl: 'http://hub', source: 'in WARREN_HUB_ADMIN_KEY' };

describe('adminKeyVerdict (pure)', () => {
  const accepted: HubAnswer = { kind: 'accepted' };
  const refused: HubAnswer = { kind: 'refused', status: 403 };
  const silent: HubAnswer = { kind: 'silent', why: 'connect ECONNREFUSED' };
  const rows: Array<[HubAnswer, RecordAnswer, boolean, string]> = [
    [accepted, 'none', true, ''],
    [accepted, 'mismatch', true, ''], // the hub is what the key belongs to
    [refused, 'match', false, 'is wrong: the hub at http://hub refused it (403)'],
    [refused, 'none', false, 'is wrong: the hub at http://hub refused it (403)'],
    [silent, 'match', true, ''],
    [silent, 'mismatch', false, 'is wrong: it is not the key the daemons on this Redis run with'],
    [silent, 'none', false, 'cannot check the admin key in WARREN_HUB_ADMIN_KEY: the hub at http://hub gave no answer (connect ECONNREFUSED) and no daemon has recorded'],
  ];
  it.each(rows)('hub %j, record %s → ok %s', (hub, record, ok, message) => {
    const v = adminKeyVerdict(hub, record, what);
    expect(v.ok).toBe(ok);
    if (!v.ok) expect(v.message).toContain(message);
  });
});

describe('askHub', () => {
  let hub: RunningHub;
  beforeAll(async () => {
    hub = await startHub({ dbPath: ':memory:', port: 0, adminKey: `admin-${randomUUID()}` });
  });
  afterAll(async () => hub?.close());

  it('a warren hub accepts its admin key and refuses another, an agent\'s key included; a hub that is down is silent', async () => {
    expect(await askHub(hub.url, hub.adminKey)).toEqual({ kind: 'accepted' });
    expect(await askHub(hub.url, `${hub.adminKey}x`)).toEqual({ kind: 'refused', status: 403 });
    const { api_key: agentKey } = (await (await fetch(`${hub.url}/agents/register`, { method: 'POST', headers: { 'x-admin-key': hub.adminKey, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'someone' }) })).json()) as { api_key: string };
    expect(await askHub(hub.url, agentKey)).toEqual({ kind: 'refused', status: 403 });
    const down = await askHub(`http://127.0.0.1:${await freePort()}`, hub.adminKey);
    expect(down.kind).toBe('silent');
  });
});

describe('AdminKeyRecord on Redis', () => {
  let redis: Redis;
  beforeAll(() => {
    redis = new Redis(inject('redisUrl'));
  });
  afterAll(() => redis?.quit());

  it('matches the recorded key only, holds no trace of it, and is kept for the same key', async () => {
    const keys = new RedisKeys(`akc-${randomUUID().slice(0, 8)}`);
    const rec = new AdminKeyRecord(redis, keys);
    const key = `admin-${randomUUID()}`;
    expect(await rec.compare(key)).toBe('none');
    await rec.record(key);
    const stored = await redis.get(keys.adminKeyCheck);
    expect(stored).not.toBeNull();
    expect(stored).not.toContain(key);
    expect(stored).not.toContain(Buffer.from(key).toString('base64'));
    expect(await rec.compare(key)).toBe('match');
    expect(await rec.compare(`${key}x`)).toBe('mismatch');
    await rec.record(key);
    expect(await redis.get(keys.adminKeyCheck)).toBe(stored);
    // A new key (rotated, daemons restarted) replaces it.
    await rec.record('another-admin-key');
    expect(await rec.compare('another-admin-key')).toBe('match');
    expect(await rec.compare(key)).toBe('mismatch');
    // A record that cannot be read counts as none, never as a match.
    await redis.set(keys.adminKeyCheck, 'not json');
    expect(await rec.compare(key)).toBe('none');
  });
});
