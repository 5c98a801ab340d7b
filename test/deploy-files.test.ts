// docker-compose.yml, the Dockerfile and .dockerignore cannot be run here (no Docker engine), so their structure
// is checked, and the build context is listed the way `docker build` applies .dockerignore.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { WarrenConfigSchema, loadWarrenConfig } from '../services/config.ts';
import { trustedNetworks, watchRefusal } from '../local-hub/watch/access.ts';

interface Service {
  image?: string;
  build?: unknown;
  command?: string[] | string;
  depends_on?: Record<string, { condition: string }>;
  volumes?: string[];
  ports?: string[];
  networks?: string[];
  environment?: Record<string, string>;
  healthcheck?: { test: string[] };
  init?: boolean;
  entrypoint?: string[];
}
interface Compose { services: Record<string, Service>; volumes?: Record<string, unknown>; networks?: Record<string, { ipam?: { config?: Array<{ subnet: string; gateway: string }> } }> }

const compose = (): Compose => parse(readFileSync('docker-compose.yml', 'utf8'), { uniqueKeys: true, merge: true }) as Compose;

/** .dockerignore's rules as Docker applies them: Go-style globs (`*`, `?`, `**`), a match on a folder covers what is inside, `!` re-includes, the last match wins. */
function dockerIgnore(text: string): (path: string) => boolean {
  const rules = text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'))
    .map((l) => {
      const negate = l.startsWith('!');
      const pattern = (negate ? l.slice(1) : l).replace(/^\/+|\/+$/g, '');
      const source = pattern
        .split(/(\*\*\/?|\*|\?)/)
        .map((part) => (part === '**/' || part === '**' ? '(?:.*/)?' : part === '*' ? '[^/]*' : part === '?' ? '[^/]' : part.replace(/[.+^${}()|[\]\\]/g, '\\$&')))
        .join('');
      return { negate, re: new RegExp(`^${source}$`) };
    });
  return (path) => {
    const parts = path.split('/');
    let ignored = false;
    for (const r of rules) {
      for (let i = 1; i <= parts.length; i++) if (r.re.test(parts.slice(0, i).join('/'))) {
        ignored = !r.negate;
        break;
      }
    }
    return ignored;
  };
}

/** Every file the build context would send: the folder walked, ignored folders not entered (no `!` rule re-includes inside them). */
function buildContext(root: string, ignored: (p: string) => boolean): string[] {
  const out: string[] = [];
  const walk = (dir: string): void => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const rel = relative(root, join(dir, e.name));
      if (ignored(rel)) continue;
      if (e.isDirectory()) walk(join(dir, e.name));
      else out.push(rel);
    }
  };
  walk(root);
  return out;
}

describe('deployment files', () => {
  it('docker-compose.yml: redis, minio, the definitions upload, the hub and warren, consistent, each with a healthcheck', () => {
    const doc = compose();
    expect(Object.keys(doc.services).sort()).toEqual(['definitions', 'hub', 'minio', 'redis', 'warren']);
    for (const [name, s] of Object.entries(doc.services)) {
      expect(s.image ?? s.build, `${name} needs image or build`).toBeTruthy();
      expect(s.healthcheck?.test.length, `${name} has a healthcheck`).toBeGreaterThan(0);
      for (const dep of Object.keys(s.depends_on ?? {})) expect(doc.services, `${name} depends on ${dep}`).toHaveProperty(dep);
      for (const v of s.volumes ?? []) {
        const source = v.split(':')[0]!;
        if (!source.startsWith('.') && !source.startsWith('/')) expect(doc.volumes, `volume ${source}`).toHaveProperty(source);
      }
      for (const n of s.networks ?? []) expect(doc.networks, `network ${n}`).toHaveProperty(n);
      // Published ports on the host's loopback only: nothing here has a password of its own but MinIO's default.
      for (const p of s.ports ?? []) expect(p, `${name} publishes ${p}`).toMatch(/^127\.0\.0\.1:\d+:\d+$/);
    }
    const { warren, hub, definitions } = doc.services;
    expect(warren?.environment?.REDIS_URL).toBe('redis://:${REDIS_PASSWORD:?set REDIS_PASSWORD}@redis:6379');
    expect(hub?.command?.[0]).toBe('hub');
    // warren reads its agents from the bucket the one-shot service fills, after it finished.
    expect(warren?.environment?.WARREN_STORE).toBe('s3://warren/defs');
    expect(warren?.environment?.AWS_ENDPOINT_URL_S3).toBe('http://minio:9000');
    expect(warren?.depends_on?.definitions).toEqual({ condition: 'service_completed_successfully' });
    expect(String(definitions?.command)).toMatch(/mc mirror .*\/examples store\/warren\/defs/);
    expect(definitions?.volumes).toContain('./examples:/examples:ro');
    // Metrics published: bound to every interface inside the container, the port on the host.
    expect(warren?.environment?.WARREN_METRICS_HOST).toBe('0.0.0.0');
    expect(warren?.ports).toContain('127.0.0.1:9464:9464');
    expect(hub?.ports).toContain('127.0.0.1:7070:7070');
  });

  it('docker-compose.yml: Redis requires a password that warren has, memory in a volume, images pinned, an init as PID 1', () => {
    const doc = compose();
    const { redis, warren, hub } = doc.services;
    // Redis: requirepass from REDIS_PASSWORD (compose refuses to start without it), never on a command line.
    expect(redis?.environment?.REDIS_PASSWORD).toBe('${REDIS_PASSWORD:?set REDIS_PASSWORD}');
    const start = String(redis?.command);
    expect(start).toContain(`printf 'requirepass %s\\n' "$$REDIS_PASSWORD" > /tmp/redis.conf`);
    expect(start).toMatch(/exec redis-server \/tmp\/redis\.conf /);
    expect(start).not.toMatch(/--requirepass/);
    expect(redis?.healthcheck?.test.join(' ')).toContain('REDISCLI_AUTH="$$REDIS_PASSWORD" redis-cli ping');
    // warren logs in with the same password (REDIS_URL in its environment; warren.yaml holds none) and, as
    // compose interpolates it, a client without it gets NOAUTH. The URL is one warren reads.
    const url = warren!.environment!.REDIS_URL!.replace('${REDIS_PASSWORD:?set REDIS_PASSWORD}', 'abc123');
    expect(loadWarrenConfig(undefined, { REDIS_URL: url }).redis.url).toBe('redis://:abc123@redis:6379');
    // Hub and agent memory in named volumes: recreating a container keeps them.
    expect(warren?.volumes).toContain('warren-data:/app/data');
    expect(hub?.volumes).toContain('hub-data:/app/data');
    expect(WarrenConfigSchema.parse({}).memory.store).toBe('./data/memory.sqlite');
    // Exact image versions, nothing floating.
    for (const [name, svc] of Object.entries(doc.services)) {
      if (!svc.image) continue;
      expect(svc.image, `${name}'s image`).not.toMatch(/:latest$|^[^:]+$/);
      expect(svc.image, `${name}'s image`).toMatch(/:(\d+\.\d+\.\d+-alpine|RELEASE\.\d{4}-\d\d-\d\dT[\d-]+Z)$/);
    }
    // tini as PID 1 where processes are started (CLI agents and their children under warren).
    expect(warren?.init).toBe(true);
    expect(hub?.init).toBe(true);
  });

  it('the hub trusts exactly the compose network’s gateway for the watch page, through warren.yaml’s env knob', () => {
    const doc = compose();
    const gateway = doc.networks?.warren?.ipam?.config?.[0]?.gateway;
    const env = doc.services.hub!.environment!;
    expect(env.WARREN_HUB_WATCH_NETWORKS).toBe(`${gateway}/32`);
    const config = loadWarrenConfig(undefined, { WARREN_HUB_WATCH_NETWORKS: env.WARREN_HUB_WATCH_NETWORKS, WARREN_METRICS_HOST: '0.0.0.0' });
    expect(config.hub.watch_networks).toEqual(['172.28.0.1/32']);
    expect(config.metrics.host).toBe('0.0.0.0');
    const rules = { policy: 'loopback' as const, names: new Set(['localhost', '127.0.0.1']) };
    const fromBrowser = { kind: 'asset' as const, host: 'localhost:7070', origin: undefined, hasSession: false, hasPageHeader: false };
    expect(watchRefusal({ ...fromBrowser, remoteAddress: '::ffff:172.28.0.1' }, rules)?.status).toBe(403);
    expect(watchRefusal({ ...fromBrowser, remoteAddress: '::ffff:172.28.0.1' }, { ...rules, trusted: trustedNetworks(config.hub.watch_networks) })).toBeUndefined();
    // Another container on the network is not the host.
    expect(watchRefusal({ ...fromBrowser, remoteAddress: '172.28.0.5' }, { ...rules, trusted: trustedNetworks(config.hub.watch_networks) })?.status).toBe(403);
    expect(() => trustedNetworks(['172.28.0.1/40'])).toThrow(/not a network/);
    expect(() => WarrenConfigSchema.parse({ hub: { watch_networks: ['everyone'] } })).toThrow(/172.16.0.0\/12/);
    expect(() => loadWarrenConfig(undefined, { WARREN_HUB_WATCH: 'public' })).toThrow(/WARREN_HUB_WATCH must be loopback, any or off/);
  });

  it('the Dockerfile: two stages, production dependencies only, the CLIs behind a build argument', () => {
    const text = readFileSync('Dockerfile', 'utf8');
    // The base image is the exact Node the project pins (package-lock.json's `node`), not a floating tag.
    const lock = JSON.parse(readFileSync('package-lock.json', 'utf8')) as { packages: Record<string, { version: string }> };
    const node = lock.packages['node_modules/node']!.version;
    expect(node).toMatch(/^24\.\d+\.\d+$/);
    expect(text.match(/^FROM node:.*$/gm)).toEqual([`FROM node:${node}-slim AS deps`, `FROM node:${node}-slim`]);
    expect(text).toMatch(/RUN npm ci --omit=dev/);
    expect(text).toMatch(/COPY --from=deps \/app\/node_modules \.\/node_modules/);
    expect(text).toMatch(/^ARG WITH_CLIS=false$/m);
    expect(text).toMatch(/if \[ "\$WITH_CLIS" = "true" \]; then npm install -g .*@anthropic-ai\/claude-code@2\.1\.330 opencode-ai@1\.18\.33/);
    expect(text).toMatch(/^USER node$/m);
    expect(text).toMatch(/ENTRYPOINT \["node", "bin\/warren\.js"\]/);
    // The pinned CLI versions are the ones the tests verify.
    const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { devDependencies: Record<string, string> };
    expect(pkg.devDependencies['@anthropic-ai/claude-code']).toBe('2.1.330');
    expect(pkg.devDependencies['opencode-ai']).toBe('1.18.33');
  });

  it('.dockerignore rules: folders cover their contents, ** and * globs, ! re-includes', () => {
    const ignored = dockerIgnore('node_modules\n/data/\n**/*.sqlite\n*.tgz\ndocs\n!docs/keep.md\n# comment\n');
    expect(ignored('node_modules/zod/package.json')).toBe(true);
    expect(ignored('data/hub.sqlite')).toBe(true);
    expect(ignored('examples/x/memory.sqlite')).toBe(true);
    expect(ignored('warren-0.1.0.tgz')).toBe(true);
    expect(ignored('sub/warren-0.1.0.tgz')).toBe(false);
    expect(ignored('docs/keep.md')).toBe(false);
    expect(ignored('docs/other.md')).toBe(true);
    expect(ignored('daemon/data.ts')).toBe(false);
  });

  it('the build context sends the sources, and no dependencies, local state, CLI credentials, history or tests', () => {
    const text = readFileSync('.dockerignore', 'utf8');
    expect(text).not.toMatch(/^!/m); // the walk below does not enter ignored folders
    const files = buildContext('.', dockerIgnore(text));
    for (const needed of ['bin/warren.js', 'package.json', 'package-lock.json', 'warren.yaml', 'daemon/cli.ts', 'examples/agents/greeter/config.yaml', 'local-hub/watch/page.html', 'redis/lua/reserve-write.lua']) expect(files).toContain(needed);
    expect(files.some((f) => f.startsWith('vendor/'))).toBe(true);
    const leaked = files.filter((f) => /^(node_modules|data|workspaces|\.git|test|bench|\.ci)\/|\.sqlite(-\w+|\.lock)?$|\.tgz$|^\.env/.test(f));
    expect(leaked).toEqual([]);
    const ignored = dockerIgnore(text);
    for (const secretish of ['workspaces/.state/claude-code-example/.credentials.json', 'data/hub.sqlite', 'data/hub.sqlite.lock', 'test/artifacts/watch.png', '.git/config', 'node_modules/.bin/vitest', '.env']) expect(ignored(secretish), secretish).toBe(true);
  });
});
