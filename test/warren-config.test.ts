// warren.yaml is validated like agent configs: every problem at once, file:line:column, did-you-mean.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadWarrenConfig } from '../services/config.ts';
import { openStore } from '../services/open-store.ts';
import { LocalFolderStore } from '../store/local-store.ts';
import { DefinitionError, formatProblem } from '../store/problems.ts';
import { S3Store } from '../store/s3-store.ts';

function configFile(text: string): string {
  const file = join(mkdtempSync(join(tmpdir(), 'warren-yaml-')), 'warren.yaml');
  writeFileSync(file, text);
  return file;
}

function problemsOf(text: string): string[] {
  const file = configFile(text);
  try {
    loadWarrenConfig(file, {});
  } catch (err) {
    if (err instanceof DefinitionError) return err.problems.map((p) => formatProblem({ ...p, file: 'warren.yaml' }));
    throw err;
  }
  return [];
}

describe('warren.yaml validation', () => {
  it('reports every problem of the file at once, with line, column and a suggestion', () => {
    expect(
      problemsOf(`schedular:\n  poll_interval: 1s\nstore:\n  typ: s3\nworkers:\n  concurrency: 0\n  context_tokens: lots\nredis: {url: "redis://x", prefx: w}\n`),
    ).toEqual([
      'warren.yaml:1:1: schedular: unknown key "schedular" (did you mean "scheduler"?)',
      'warren.yaml:4:3: store.typ: unknown key "typ" (did you mean "type"?)',
      'warren.yaml:6:16: workers.concurrency: must be at least 1 (got 0)',
      'warren.yaml:7:19: workers.context_tokens: expected a number, got "lots"',
      'warren.yaml:8:27: redis.prefx: unknown key "prefx" (did you mean "prefix"?)',
    ]);
  });

  it('redis.cluster: node URLs checked by field; set, the prefix becomes a hash tag (one slot for BullMQ and warren)', () => {
    expect(problemsOf('redis:\n  cluster: ["http://a:7000", "redis://b:7001"]\n')).toEqual(['warren.yaml:2:13: redis.cluster[0]: expected a redis:// or rediss:// URL of a cluster node']);
    expect(problemsOf('redis:\n  cluster: []\n')).toEqual(['warren.yaml:2:12: redis.cluster: must have at least 1 item (got 0 items)']);
    const clustered = loadWarrenConfig(configFile('redis:\n  cluster: ["redis://10.0.0.1:7000", "redis://10.0.0.2:7000"]\n  prefix: acme\n'), {});
    expect(clustered.redis).toMatchObject({ cluster: ['redis://10.0.0.1:7000', 'redis://10.0.0.2:7000'], prefix: '{acme}' });
    expect(loadWarrenConfig(configFile('redis: {cluster: ["redis://h:7000"], prefix: "{acme}:prod"}\n'), {}).redis.prefix).toBe('{acme}:prod');
    expect(loadWarrenConfig(configFile('redis: {prefix: acme}\n'), {}).redis.prefix).toBe('acme'); // one Redis: as configured
  });

  it('checks the store settings: an s3 store needs an s3:// url, durations and env names are checked', () => {
    expect(problemsOf('store:\n  type: s3\n')).toEqual(['warren.yaml:2:3: store.url: store.type s3 needs store.url (s3://bucket/prefix)']);
    expect(problemsOf('store:\n  type: s3\n  url: https://bucket.example/agents\n  poll_interval: often\n  access_key_id_env: my-key\n')).toEqual([
      'warren.yaml:3:8: store.url: expected s3://bucket/prefix',
      'warren.yaml:4:18: store.poll_interval: expected a duration like 500ms, 2s or 1m',
      'warren.yaml:5:22: store.access_key_id_env: expected the NAME of an environment variable, like AWS_ACCESS_KEY_ID',
    ]);
    expect(problemsOf('store:\n  type: r2\n')).toEqual(['warren.yaml:2:9: store.type: expected one of: local, s3; got "r2"']);
  });

  it('opens the configured store: a folder by default, a bucket for type s3 or an s3:// target', async () => {
    const local = loadWarrenConfig(configFile('store: {path: ./defs}\n'), {});
    expect(await openStore(local.store, {})).toBeInstanceOf(LocalFolderStore);
    const s3 = loadWarrenConfig(configFile('store:\n  type: s3\n  url: s3://team-defs/prod\n  endpoint: https://acct.r2.cloudflarestorage.com\n  cache_ttl: 2m\n'), {});
    expect(s3.store).toMatchObject({ type: 's3', url: 's3://team-defs/prod', region: 'auto', cache_ttl: 120_000, poll_interval: 30_000, watch: true });
    const store = await openStore(s3.store, { AWS_ACCESS_KEY_ID: 'id', AWS_SECRET_ACCESS_KEY: 'secret' });
    expect(store).toBeInstanceOf(S3Store);
    expect(store.location).toBe('s3://team-defs/prod/');
    store.close?.();
    const target = await openStore(local.store, {}, 's3://other/x');
    expect(target.location).toBe('s3://other/x/');
    target.close?.();
  });

  it('WARREN_STORE points the daemon at a folder or a bucket, whatever the file says', () => {
    const file = configFile('store: {path: ./defs}\n');
    expect(loadWarrenConfig(file, { WARREN_STORE: 's3://defs/team' }).store).toMatchObject({ type: 's3', url: 's3://defs/team' });
    expect(loadWarrenConfig(file, { WARREN_STORE: '/srv/agents' }).store).toMatchObject({ type: 'local', path: '/srv/agents' });
    expect(() => loadWarrenConfig(file, { WARREN_STORE: 's3://' })).toThrow('WARREN_STORE must be a folder or s3://bucket/prefix, got "s3://"');
  });
});
