// Redis credentials, TLS and Unix sockets (issue 26 item 1): how warren.yaml and REDIS_URL become ioredis options,
// where the password may come from, the start check's decision, and real connections to a private redis-server
// with requirepass (TCP and a Unix socket) from the ops commands.
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pino } from 'pino';
import { describe, expect, inject, it } from 'vitest';
import { connectRedis, closeRedis, pingWithoutCredentials } from '../redis/connect.ts';
import { endpointOptions, parseRedisUrl, type RedisEndpoint } from '../redis/connection-options.ts';
import type { FleetSource } from '../local-hub/watch/fleet.ts';
import { openServices } from '../services/composition.ts';
import { loadWarrenConfig } from '../services/config.ts';
import { REDACTED } from '../services/redact.ts';
import { inlineCredentialsProblem } from '../services/redis-credentials.ts';
import { redisExposure, type ExposureFacts } from '../services/redis-exposure.ts';
import { DefinitionError } from '../store/problems.ts';
import { PROCESS_START_MS, PROCESS_TEST_MS } from './support/ceilings.ts';
import { waitFor } from './support/hub-api.ts';
import { startPrivateRedis } from './support/redis-server.ts';

const dir = (): string => mkdtempSync(join(tmpdir(), 'warren-redis-auth-'));
const configFile = (text: string, mode = 0o644): string => {
  const file = join(dir(), 'warren.yaml');
  writeFileSync(file, text);
  chmodSync(file, mode);
  return file;
};
const errorOf = (fn: () => unknown): string => {
  try {
    fn();
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
  return 'no error';
};

describe('a Redis URL', () => {
  it.each<[string, RedisEndpoint | RegExp]>([
    ['redis://127.0.0.1:6379', { host: '127.0.0.1', port: 6379, tls: false }],
    ['redis://redis', { host: 'redis', port: 6379, tls: false }],
    ['redis://:s%40cret@10.0.0.1:7000/2', { host: '10.0.0.1', port: 7000, db: 2, password: 's@cret', tls: false }],
    ['redis://warren:pw@host:6380', { host: 'host', port: 6380, username: 'warren', password: 'pw', tls: false }],
    ['rediss://host:6380', { host: 'host', port: 6380, tls: true }],
    ['redis://[::1]:6379', { host: '::1', port: 6379, tls: false }],
    ['unix:///run/redis/redis.sock', { path: '/run/redis/redis.sock', tls: false }],
    ['unix:///run/redis/redis.sock?db=3', { path: '/run/redis/redis.sock', db: 3, tls: false }],
    ['unix://run/redis.sock', /three slashes/],
    ['http://host:6379', /unknown scheme http:/],
    ['redis://host/x', /database "x" is not a number/],
    ['not a url', /not a URL/],
  ])('%s', (url, expected) => {
    if (expected instanceof RegExp) expect(errorOf(() => parseRedisUrl(url))).toMatch(expected);
    else expect(parseRedisUrl(url)).toEqual(expected);
  });

  it('becomes ioredis options: the URL\'s credentials, else the configured ones; none for the start check; TLS files read', () => {
    const read = (p: string): string => `<${p}>`;
    expect(endpointOptions('redis://:a@h:1', 'redis://:a@h:1', read)).toEqual({ host: 'h', port: 1, password: 'a' });
    expect(endpointOptions({ url: 'redis://h:1', username: 'warren', password: 'b' }, 'redis://h:1', read)).toEqual({ host: 'h', port: 1, username: 'warren', password: 'b' });
    expect(endpointOptions({ url: 'redis://h:1', username: 'warren', password: 'b' }, 'redis://h:1', read, false)).toEqual({ host: 'h', port: 1 });
    expect(endpointOptions({ url: 'unix:///s.sock', password: 'c' }, 'unix:///s.sock', read)).toEqual({ path: '/s.sock', password: 'c' });
    expect(endpointOptions('rediss://h:1', 'rediss://h:1', read)).toEqual({ host: 'h', port: 1, tls: {} });
    expect(endpointOptions({ url: 'redis://h:1', tls: { ca_file: '/ca.pem', cert_file: '/c.pem', key_file: '/k.pem', servername: 'redis.internal', reject_unauthorized: false } }, 'redis://h:1', read)).toEqual({
      host: 'h',
      port: 1,
      tls: { ca: '</ca.pem>', cert: '</c.pem>', key: '</k.pem>', servername: 'redis.internal', rejectUnauthorized: false },
    });
  });
});

describe('where the Redis password may come from', () => {
  it.each<[string, number, string[], boolean]>([
    ['no password, any mode', 0o644, ['redis://h:1'], false],
    ['a password, owner-only file', 0o600, ['redis://:pw@h:1'], false],
    ['a password, owner-only read', 0o400, ['redis://:pw@h:1'], false],
    ['a password, group-readable', 0o640, ['redis://:pw@h:1'], true],
    ['a password, world-readable', 0o644, ['redis://:pw@h:1'], true],
    ['a cluster node with a password, world-readable', 0o644, ['redis://h:1', 'redis://u:pw@h:2'], true],
  ])('inline in warren.yaml: %s', (_, mode, urls, refused) => {
    expect(inlineCredentialsProblem(mode, urls) !== undefined).toBe(refused);
  });

  it('redis.password is refused in warren.yaml, naming the keys to use instead', () => {
    const file = configFile('redis: {url: "redis://h:1", password: hunter2}\n');
    const err = errorOf(() => loadWarrenConfig(file, {}));
    expect(err).toContain('redis.password');
    expect(err).toContain('redis.password_env');
    expect(err).toContain('redis.password_file');
  });

  it('a password in a world-readable warren.yaml\'s URL is refused; the same file at mode 600 is fine; REDIS_URL is not judged by the file', () => {
    const text = 'redis: {url: "redis://:hunter2@h:1"}\n';
    let caught: unknown;
    try {
      loadWarrenConfig(configFile(text, 0o644), {});
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(DefinitionError);
    expect((caught as DefinitionError).message).toMatch(/redis\.url holds a Redis password but the file is readable by others \(mode 644\): chmod 600 it/);
    expect(loadWarrenConfig(configFile(text, 0o600), {}).redis.url).toBe('redis://:hunter2@h:1');
    expect(loadWarrenConfig(configFile('redis: {url: "redis://h:1"}\n'), { REDIS_URL: 'redis://:pw@h:2' }).redis.url).toBe('redis://:pw@h:2');
  });

  it('redis.password_env: the variable, or its NAME_FILE; unset is an error naming the key', () => {
    const file = configFile('redis: {url: "redis://h:1", username: warren, password_env: REDIS_PASSWORD}\n');
    expect(loadWarrenConfig(file, { REDIS_PASSWORD: 'from-env' }).redis).toMatchObject({ username: 'warren', password: 'from-env' });
    const secret = join(dir(), 'redis-password');
    writeFileSync(secret, 'from-file\n', { mode: 0o600 });
    expect(loadWarrenConfig(file, { REDIS_PASSWORD_FILE: secret }).redis.password).toBe('from-file');
    expect(errorOf(() => loadWarrenConfig(file, {}))).toMatch(/^redis\.password_env: names REDIS_PASSWORD, which is not set/);
  });

  it('redis.password_file: relative to warren.yaml, trailing newline dropped; missing, empty or doubled is an error naming the key', () => {
    const file = configFile('redis: {url: "redis://h:1", password_file: secrets/redis}\n');
    const secrets = join(dirname(file), 'secrets');
    mkdirSync(secrets);
    expect(errorOf(() => loadWarrenConfig(file, {}))).toMatch(/^redis\.password_file: .*secrets\/redis cannot be read \(ENOENT\)/);
    writeFileSync(join(secrets, 'redis'), '\n', { mode: 0o600 });
    expect(errorOf(() => loadWarrenConfig(file, {}))).toMatch(/^redis\.password_file: .* is empty/);
    writeFileSync(join(secrets, 'redis'), 'pw-in-file\n', { mode: 0o600 });
    const config = loadWarrenConfig(file, {});
    expect(config.redis.password).toBe('pw-in-file');
    expect(config.redis.password_file).toBe(join(secrets, 'redis'));
    expect(errorOf(() => loadWarrenConfig(file, { REDIS_URL: 'redis://:other@h:1' }))).toMatch(/the Redis URL holds a password too/);
    expect(errorOf(() => loadWarrenConfig(configFile('redis: {password_env: A, password_file: b}\n'), { A: 'x' }))).toMatch(/^redis\.password_env: set password_env or password_file, not both/);
  });

  it('the opt-out: redis.allow_unauthenticated, or WARREN_ALLOW_OPEN_REDIS=1; off by default', () => {
    expect(loadWarrenConfig(configFile('redis: {url: "redis://h:1"}\n'), {}).redis.allow_unauthenticated).toBe(false);
    expect(loadWarrenConfig(configFile('redis: {allow_unauthenticated: true}\n'), {}).redis.allow_unauthenticated).toBe(true);
    expect(loadWarrenConfig(configFile('redis: {url: "redis://h:1"}\n'), { WARREN_ALLOW_OPEN_REDIS: '1' }).redis.allow_unauthenticated).toBe(true);
  });
});

describe('whether CLI agents may run beside this Redis', () => {
  const facts = (f: Partial<ExposureFacts>): ExposureFacts => ({ answer: { kind: 'refuses', reply: 'NOAUTH Authentication required.' }, socketReachable: undefined, readablePasswordFile: undefined, allowUnauthenticated: false, where: 'redis://h:1', user: 'warren-agent', ...f });
  it.each<[string, Partial<ExposureFacts>, 'run' | 'warn' | 'refuse']>([
    ['needs credentials', {}, 'run'],
    ['answers without credentials (TCP)', { answer: { kind: 'answers' } }, 'refuse'],
    ['answers, opted out', { answer: { kind: 'answers' }, allowUnauthenticated: true }, 'warn'],
    ['answers on a socket the agents can reach', { answer: { kind: 'answers' }, socketReachable: true }, 'refuse'],
    ['answers on a socket the agents cannot reach', { answer: { kind: 'answers' }, socketReachable: false }, 'run'],
    ['needs credentials, but the password file is readable by the agents', { readablePasswordFile: '/etc/warren/redis' }, 'refuse'],
    ['password file readable, opted out', { readablePasswordFile: '/etc/warren/redis', allowUnauthenticated: true }, 'warn'],
    ['no answer to the check', { answer: { kind: 'unreachable', reason: 'ECONNREFUSED' } }, 'warn'],
  ])('%s', (_, f, expected) => {
    const e = redisExposure(facts(f));
    expect(e.refuse ? 'refuse' : e.warning ? 'warn' : 'run').toBe(expected);
  });

  it('the refusal names the fix and the opt-out', () => {
    const e = redisExposure(facts({ answer: { kind: 'answers' } }));
    expect(e.refuse && e.reason).toMatch(/Redis at redis:\/\/h:1 answers without credentials, so CLI agents \(running as warren-agent\) could rewrite warren's state.*set requirepass \(or an ACL user\).*REDIS_URL.*redis\.password_env \/ redis\.password_file.*redis\.allow_unauthenticated: true \(or WARREN_ALLOW_OPEN_REDIS=1\)/);
  });
});

describe('connections to a Redis with requirepass', { timeout: PROCESS_TEST_MS }, () => {
  it('TCP: warren\'s connection logs in with redis.password_env; without credentials the check sees NOAUTH; an open Redis answers', async () => {
    const password = `pw-${randomBytes(8).toString('hex')}`;
    const redis = await startPrivateRedis({ password });
    try {
      const conn = connectRedis({ url: redis.plainUrl, password }, 'producer', pino({ level: 'silent' }));
      expect(await conn.ping()).toBe('PONG');
      await closeRedis(conn);
      expect(await pingWithoutCredentials({ url: redis.plainUrl, password })).toMatchObject({ kind: 'refuses', reply: expect.stringMatching(/NOAUTH/) as unknown });
      expect(await pingWithoutCredentials({ url: inject('redisUrl') })).toEqual({ kind: 'answers' });
      // `warren status` with the password in REDIS_URL: connected, and the URL it prints has none.
      const empty = join(dir(), 'agents');
      mkdirSync(empty);
      const status = spawnSync(process.execPath, ['bin/warren.js', 'status', '--json', '--config', configFile(`store: {path: "${empty}"}\n`)], { encoding: 'utf8', env: { ...process.env, REDIS_URL: redis.url }, timeout: PROCESS_START_MS });
      expect((JSON.parse(status.stdout) as { redis: { url: string; ok: boolean } }).redis).toEqual({ url: `redis://:***@127.0.0.1:${redis.port}`, ok: true });
      expect(status.stdout + status.stderr).not.toContain(password);
    } finally {
      await redis.stop();
    }
  });

  it('an ACL user in REDIS_URL (redis://user:password@host:port) logs in; the daemon\'s services know the password as a secret', async () => {
    const password = `pw-${randomBytes(8).toString('hex')}`;
    const aclPassword = `acl-${randomBytes(8).toString('hex')}`;
    const redis = await startPrivateRedis({ password });
    const admin = connectRedis(redis.url, 'producer', pino({ level: 'silent' }));
    try {
      await admin.call('ACL', 'SETUSER', 'warren', 'on', `>${aclPassword}`, '~*', '&*', '+@all');
      const url = `redis://warren:${aclPassword}@127.0.0.1:${redis.port}`;
      const conn = connectRedis(url, 'producer', pino({ level: 'silent' }));
      expect(await conn.call('ACL', 'WHOAMI')).toBe('warren');
      await closeRedis(conn);
      // The password from redis.password_env, redacted wherever the daemon's services write or log.
      const base = dir();
      const file = configFile(`redis: {url: "${redis.plainUrl}", password_env: TEST_REDIS_PW, prefix: redis-auth-secret}\nhub: {embedded: true, db: ":memory:", port: 0}\nstore: {path: "${base}"}\nmemory: {store: "${join(base, 'memory.sqlite')}"}\n`);
      const config = loadWarrenConfig(file, { TEST_REDIS_PW: password });
      let redactLine: ((line: string) => string) | undefined;
      const fleet: FleetSource = { agents: () => Promise.resolve([]), setPaused: () => Promise.resolve() };
      const services = await openServices(config, { PATH: process.env.PATH, TEST_REDIS_PW: password }, { name: 'daemon', logger: pino({ level: 'silent' }), runsActivations: false, agents: { get: () => undefined }, fleet, redactLogs: (redact) => (redactLine = redact) });
      try {
        expect(await services.redis.ping()).toBe('PONG');
        expect(services.redactor.redact(`pw ${password}`)).toBe(`pw ${REDACTED}`);
        expect(redactLine?.(`pw ${password}`)).toBe(`pw ${REDACTED}`);
      } finally {
        await services.close();
      }
    } finally {
      await closeRedis(admin);
      await redis.stop();
    }
  });

  it('a Unix socket (unix:///path), and `warren status` through it with redis.password_file, the password in no output', async () => {
    const password = `pw-${randomBytes(8).toString('hex')}`;
    const base = dir();
    const socket = join(base, 'redis.sock');
    const server = spawn('redis-server', ['--port', '0', '--unixsocket', socket, '--unixsocketperm', '700', '--save', '', '--dir', base, '--requirepass', password], { stdio: 'ignore' });
    try {
      await waitFor('the socket', () => existsSync(socket) || undefined, PROCESS_START_MS);
      const conn = connectRedis({ url: `unix://${socket}`, password }, 'producer', pino({ level: 'silent' }));
      expect(await conn.ping()).toBe('PONG');
      await closeRedis(conn);
      mkdirSync(join(base, 'agents'));
      const file = configFile(`redis: {url: "unix://${socket}", password_file: redis-password}\nstore: {path: "${join(base, 'agents')}"}\n`);
      writeFileSync(join(dirname(file), 'redis-password'), `${password}\n`, { mode: 0o600 });
      const r = spawnSync(process.execPath, ['bin/warren.js', 'status', '--json', '--config', file], { encoding: 'utf8', env: { ...process.env, REDIS_URL: '' }, timeout: PROCESS_START_MS });
      const report = JSON.parse(r.stdout) as { redis: { url: string; ok: boolean } };
      expect(report.redis).toMatchObject({ url: `unix://${socket}`, ok: true });
      expect(r.stdout + r.stderr).not.toContain(password);
    } finally {
      server.kill('SIGKILL');
    }
  });
});
