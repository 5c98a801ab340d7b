// Definitions change under a running daemon: file edits, a broken agent fixed later, `warren reload`, and an
// unreachable store that keeps the last good definitions.
import { spawnSync } from 'node:child_process';
import { appendFileSync, mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pino } from 'pino';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { AgentRegistry } from '../daemon/agent-registry.ts';
import { ExecutorRegistry } from '../services/executor-registry.ts';
import { LlmExecutor } from '../executors/llm/llm-executor.ts';
import { StoreUnavailableError, type DefinitionStore, type LoadResult } from '../store/definition.ts';
import { isStoreKey } from '../store/layout.ts';
import { changedKeys, changedSinceLoad, LocalFolderStore } from '../store/local-store.ts';
import { Reloader, retryDelay } from '../store/reloader.ts';
import { makeAgentsDir, startHarness, type Harness } from './support/daemon-harness.ts';
import { waitFor, type WirePost } from './support/hub-api.ts';
import { PROCESS_START_MS } from './support/ceilings.ts';

const redisUrl = inject('redisUrl');
let h: Harness | undefined;
afterEach(async () => {
  await h?.stop();
  h = undefined;
});

const echo = (reply: string): string => `name: echo\ntype: llm\nbrain:\n  provider: scripted\n  model: m\n  responses: [${JSON.stringify(reply)}]\ncapabilities: {grants: [hub:read, hub:write]}\nbehavior: {limits: {min_interval_seconds: 0}}\n`; // replies back to back

async function replyTo(harness: Harness, key: string, agent: string, text: string): Promise<string> {
  const post = await harness.api.post<{ id: string }>('/posts', key, { content: `@${agent} ${text}` });
  return waitFor(`${agent} reply`, async () => {
    const p = await harness.api.get<WirePost>(`/posts/${post.id}?include_comments=true`, key);
    return p.comments?.find((c) => c.author.name === agent)?.content;
  });
}

const loadedCount = (harness: Harness): number => harness.logs.filter((l) => l.includes('agent definitions loaded')).length;

describe('hot reload', () => {
  it('an edited config changes the next activation without a restart', async () => {
    const dir = makeAgentsDir({ echo: { config: echo('first answer'), prompt: 'You are echo.' } });
    h = await startHarness({ redisUrl, agentsDir: dir });
    const key = await h.registerUser('alice');
    expect(await replyTo(h, key, 'echo', 'one')).toBe('first answer');

    writeFileSync(join(dir, 'echo', 'config.yaml'), echo('second answer'));
    const harness = h;
    await waitFor('reload', () => (harness.daemon.registry.get('echo')?.config.brain.responses?.[0] === 'second answer' ? true : undefined), 5_000);
    expect(await replyTo(h, key, 'echo', 'two')).toBe('second answer');
  });

  it('skips a broken agent, keeps the others, and picks it up once fixed', async () => {
    const dir = makeAgentsDir({ echo: { config: echo('fine'), prompt: 'You are echo.' }, later: { config: 'name: later\ntype: llm\nbrain: {model: m, temperature: 9}\ncapabilities: {}\n', prompt: 'x' } });
    h = await startHarness({ redisUrl, agentsDir: dir });
    expect([...h.daemon.registry.runnable()].sort()).toEqual(['echo', 'greeter']);
    expect(h.logs.join('\n')).toMatch(/later\/config\.yaml:3:32: brain\.temperature/);

    writeFileSync(join(dir, 'later', 'config.yaml'), echo('now I work').replace('name: echo', 'name: later'));
    const harness = h;
    await waitFor('later runnable', () => (harness.daemon.registry.runnable().has('later') ? true : undefined), 5_000);
    // Mentionable once the hub knows the name (registration follows the reload).
    await waitFor('later registered', () => harness.api.get('/agents/later', harness.adminKey).then(() => true, () => undefined), 5_000);
    const key = await h.registerUser('bob');
    // Registered on the hub as it appeared, so it can be mentioned and answers.
    expect(await replyTo(h, key, 'later', 'hello')).toBe('now I work');
    expect(await replyTo(h, key, 'echo', 'still there?')).toBe('fine');
  });

  it('`warren reload` reaches the running daemon through Redis', async () => {
    const dir = makeAgentsDir({ echo: { config: echo('a'), prompt: 'x' } });
    h = await startHarness({ redisUrl, agentsDir: dir, config: (c) => (c.store.watch = false) });
    const before = loadedCount(h);
    writeFileSync(join(dir, 'echo', 'config.yaml'), echo('b'));
    const cfgDir = mkdtempSync(join(tmpdir(), 'warren-reload-'));
    writeFileSync(join(cfgDir, 'warren.yaml'), `redis: {url: "${redisUrl}", prefix: ${h.prefix}}\n`);
    const r = spawnSync(process.execPath, [resolve('bin/warren.js'), 'reload', '--config', join(cfgDir, 'warren.yaml')], { encoding: 'utf8', env: { ...process.env, REDIS_URL: '' }, timeout: PROCESS_START_MS });
    expect(r.stdout).toContain('reload sent to 1 daemon');
    expect(r.status).toBe(0);
    const harness = h;
    await waitFor('reloaded', () => (loadedCount(harness) > before ? true : undefined), 5_000);
    expect(h.daemon.registry.get('echo')?.config.brain.responses).toEqual(['b']);

    writeFileSync(join(cfgDir, 'warren.yaml'), `redis: {url: "${redisUrl}", prefix: nobody-listens}\n`);
    const none = spawnSync(process.execPath, [resolve('bin/warren.js'), 'reload', '--config', join(cfgDir, 'warren.yaml')], { encoding: 'utf8', env: { ...process.env, REDIS_URL: '' }, timeout: PROCESS_START_MS });
    expect(none.status).toBe(1);
    expect(none.stdout).toContain('no running daemon');
  });
});

/** Six levels of nine aliases each: the yaml library refuses to expand it (its maxAliasCount) by throwing. */
const ALIAS_BOMB = ['a: &a [x, x, x, x, x, x, x, x, x]', ...['b', 'c', 'd', 'e', 'f'].map((k, i) => `${k}: &${k} [${Array(9).fill(`*${'abcde'[i]}`).join(', ')}]`)].join('\n');

describe('one bad file', () => {
  it('an alias bomb in one config is that agent\'s problem: the others load, and their edits are picked up', async () => {
    const dir = makeAgentsDir({ echo: { config: echo('before'), prompt: 'x' }, bomb: { config: `name: bomb\n${ALIAS_BOMB}\n`, prompt: 'x' } });
    const skills = join(dir, '..', 'skills', 'boom');
    mkdirSync(skills, { recursive: true });
    writeFileSync(join(skills, 'SKILL.md'), `---\n${ALIAS_BOMB}\n---\nBoom.`);
    const logs: string[] = [];
    const logger = pino({ level: 'debug' }, { write: (l: string) => void logs.push(l) });
    const registry = new AgentRegistry({ store: new LocalFolderStore(join(dir, '..')), executors: new ExecutorRegistry(new LlmExecutor({ secret: () => undefined })), logger });
    expect(await registry.reload()).toBe(true); // not "store unavailable"
    expect([...registry.runnable()].sort()).toEqual(['echo', 'greeter']);
    const text = logs.join('\n');
    expect(text).toMatch(/agents\/bomb\/config\.yaml:\d+:\d+: too many alias expansions/);
    expect(text).toMatch(/skills\/boom\/SKILL\.md:\d+:\d+: too many alias expansions/);
    expect(registry.brokenDefinitions()).toBe(2);

    writeFileSync(join(dir, 'echo', 'config.yaml'), echo('after'));
    expect(await registry.reload()).toBe(true);
    expect(registry.get('echo')?.config.brain.responses).toEqual(['after']);
  });
});

/** How long a save may take to be loaded: `store.check_interval` (2 s, README "Definitions store") and the debounce, with room for a busy machine. */
const SAVE_LOADED_MS = 10_000;

describe('saves as editors make them', () => {
  it('a save by rename, then two in place: each is loaded within seconds', async () => {
    const dir = makeAgentsDir({ echo: { config: echo('zero'), prompt: 'x' } });
    h = await startHarness({ redisUrl, agentsDir: dir });
    const harness = h;
    const file = join(dir, 'echo', 'config.yaml');
    const loaded = (answer: string): Promise<true> => waitFor(`"${answer}" loaded`, () => (harness.daemon.registry.get('echo')?.config.brain.responses?.[0] === answer ? true : undefined), SAVE_LOADED_MS);
    // As `sed -i` and vim save: a new file renamed over the old one.
    writeFileSync(`${file}.tmp`, echo('renamed'));
    renameSync(`${file}.tmp`, file);
    await loaded('renamed');
    // As nano and VS Code save: the same file written again. Node's recursive fs.watch went deaf to these once the
    // file had been replaced (its watch stayed on the old inode); the folder's watch hears them.
    writeFileSync(file, echo('in place'));
    await loaded('in place');
    writeFileSync(file, echo('in place again'));
    await loaded('in place again');
  });

  it('changed-file detection compares inode, size and times per file', () => {
    const before = new Map([['agents/a/config.yaml', '1:10:5:5'], ['agents/b/config.yaml', '2:10:5:5'], ['agents/c/config.yaml', '3:10:5:5']]);
    const cases: Array<[string, Map<string, string>, string[]]> = [
      ['nothing changed', new Map(before), []],
      ['written in place', new Map([...before, ['agents/a/config.yaml', '1:10:6:6']]), ['agents/a/config.yaml']],
      ['replaced by a rename', new Map([...before, ['agents/b/config.yaml', '9:10:5:7']]), ['agents/b/config.yaml']],
      ['a file added', new Map([...before, ['agents/d/config.yaml', '4:1:1:1']]), ['agents/d/config.yaml']],
      ['a file removed', new Map([...before].filter(([k]) => k !== 'agents/c/config.yaml')), ['agents/c/config.yaml']],
    ];
    for (const [what, after, changed] of cases) expect(changedKeys(before, after), what).toEqual(changed);
  });

  it('what a watch that began after a load has not seen: saved after the millisecond the load began, added or removed', () => {
    const ns = (ms: number): string => String(BigInt(ms) * 1_000_000n + 123n);
    const load = { startedAt: 5_000, keys: new Set(['agents/a/config.yaml', 'agents/a/system-prompt.md', 'agents/b/config.yaml']) };
    const at = (ms: number): string => `7:10:${ns(ms)}:${ns(ms)}`;
    const cases: Array<[string, Array<[string, string]>, string[], Map<string, number>?]> = [
      ['saved before the load', [['agents/a/config.yaml', at(4_990)], ['agents/a/system-prompt.md', at(10)], ['agents/b/config.yaml', at(4_999)]], []],
      ['saved in the millisecond the load began (the file clock lags: before it)', [['agents/a/config.yaml', at(5_000)], ['agents/a/system-prompt.md', at(10)], ['agents/b/config.yaml', at(10)]], []],
      ['saved after', [['agents/a/config.yaml', at(10)], ['agents/a/system-prompt.md', at(5_001)], ['agents/b/config.yaml', at(10)]], ['agents/a/system-prompt.md']],
      ['a listed file missing (an agent without its prompt)', [['agents/a/config.yaml', at(10)], ['agents/a/system-prompt.md', '-'], ['agents/b/config.yaml', at(10)]], []],
      ['a listed file missing, its folder changed since (deleted)', [['agents/a/config.yaml', at(10)], ['agents/a/system-prompt.md', '-'], ['agents/b/config.yaml', at(10)]], ['agents/a/system-prompt.md'], new Map([['agents/a/system-prompt.md', 5_001]])],
      ['a listed file missing, its folder unchanged since', [['agents/a/config.yaml', at(10)], ['agents/a/system-prompt.md', '-'], ['agents/b/config.yaml', at(10)]], [], new Map([['agents/a/system-prompt.md', 4_000]])],
      // A folder's change time comes with a fraction of a ms; the load's start is whole ms (a CI run reloaded an untouched store).
      ['a listed file missing, its folder changed in the millisecond the load began (before it)', [['agents/a/config.yaml', at(10)], ['agents/a/system-prompt.md', '-'], ['agents/b/config.yaml', at(10)]], [], new Map([['agents/a/system-prompt.md', 5_000.53]])],
      ['an agent added', [['agents/a/config.yaml', at(10)], ['agents/a/system-prompt.md', at(10)], ['agents/b/config.yaml', at(10)], ['agents/c/config.yaml', at(10)], ['agents/c/system-prompt.md', '-']], ['agents/c/config.yaml']],
      ['an agent removed', [['agents/a/config.yaml', at(10)], ['agents/a/system-prompt.md', at(10)]], ['agents/b/config.yaml']],
    ];
    for (const [what, now, changed, folders] of cases) expect(changedSinceLoad(load, new Map(now), folders), what).toEqual(changed);
  });
});

describe('what the watcher reacts to', () => {
  it('only the store\'s own files: a log file beside the agents folder or an editor\'s swap file reloads nothing', async () => {
    const agents = makeAgentsDir({ echo: { config: echo('x'), prompt: 'x' } });
    const parent = join(agents, '..');
    // The store path is the agents folder itself, so its parent (which holds the log) is watched for skills/ and prompts/.
    const store = new LocalFolderStore(agents, { debounceMs: 50, checkIntervalMs: 100 });
    let changes = 0;
    const stop = store.watch(() => changes++);
    try {
      for (let i = 0; i < 20; i++) {
        appendFileSync(join(parent, 'daemon.log'), `line ${i}\n`);
        appendFileSync(join(agents, 'daemon.log'), `line ${i}\n`);
        writeFileSync(join(agents, 'echo', '.config.yaml.swp'), `swap ${i}`);
        mkdirSync(join(agents, 'echo', 'workspace'), { recursive: true });
        writeFileSync(join(agents, 'echo', 'workspace', 'notes.md'), `note ${i}`);
        await new Promise((r) => setTimeout(r, 20));
      }
      await new Promise((r) => setTimeout(r, 300)); // a few more checks and debounces: none of it was a change
      expect(changes).toBe(0);
      writeFileSync(join(agents, 'echo', 'system-prompt.md'), 'changed');
      await expect.poll(() => changes, { timeout: 3_000 }).toBeGreaterThanOrEqual(1); // the store's own file is
      expect(isStoreKey('agents/echo/system-prompt.md')).toBe(true);
      expect(['daemon.log', 'agents/daemon.log', 'agents/echo/.config.yaml.swp', 'agents/echo/4913', 'agents/echo/workspace/notes.md', 'prompts/readme.txt', 'skills/x/notes.md'].filter(isStoreKey)).toEqual([]);
      expect(['agents/echo', 'agents/echo/config.yaml', 'skills/late', 'skills/late/SKILL.md', 'prompts', 'prompts/notification-task.md', 'skills'].filter(isStoreKey)).toHaveLength(7);
    } finally {
      stop();
    }
  });
});

describe('folder watch', () => {
  it('reports edits, debounced, including a skills/ folder created after the watch began', async () => {
    const agents = makeAgentsDir({ echo: { config: echo('x'), prompt: 'x' } });
    const root = join(agents, '..');
    const store = new LocalFolderStore(root, { debounceMs: 50 });
    let changes = 0;
    const stop = store.watch(() => changes++);
    try {
      await new Promise((r) => setTimeout(r, 300)); // the folders' watches are set up without blocking the loop
      writeFileSync(join(agents, 'echo', 'config.yaml'), echo('y'));
      writeFileSync(join(agents, 'echo', 'system-prompt.md'), 'y');
      await expect.poll(() => changes, { timeout: 3_000 }).toBe(1); // two writes, one reload
      mkdirSync(join(root, 'skills', 'late'), { recursive: true });
      await expect.poll(() => changes, { timeout: 3_000 }).toBeGreaterThanOrEqual(2);
      const before = changes;
      await new Promise((r) => setTimeout(r, 150));
      writeFileSync(join(root, 'skills', 'late', 'SKILL.md'), 'Be late.');
      await expect.poll(() => changes, { timeout: 3_000 }).toBeGreaterThan(before);
      expect((await store.load()).shared.skills.map((k) => k.name)).toContain('late');
    } finally {
      stop();
    }
  });

  // The watch begins after the start's load; its first check took the files as they were then as its baseline, so a
  // save in between (a large store loads for seconds) was never reloaded.
  it('a save made after the load read the store and before the watch began is reloaded; an untouched store is not', async () => {
    const agents = makeAgentsDir({ echo: { config: echo('x'), prompt: 'x' }, other: { config: echo('o').replace('name: echo', 'name: other'), prompt: 'o' } });
    const root = join(agents, '..');
    rmSync(join(agents, 'other', 'system-prompt.md')); // an agent without its prompt file: missing is no change
    const untouched = new LocalFolderStore(root, { debounceMs: 50, checkIntervalMs: 100 });
    const edited = new LocalFolderStore(root, { debounceMs: 50, checkIntervalMs: 100 });
    await untouched.load();
    let quiet = 0;
    const stopQuiet = untouched.watch(() => quiet++);
    await new Promise((r) => setTimeout(r, 600)); // several checks
    stopQuiet();
    expect(quiet).toBe(0);

    const reasons: Array<string | undefined> = [];
    await edited.load();
    // While the daemon's start goes on (a file's change time lags the clock by a tick: not in the same few ms).
    await new Promise((r) => setTimeout(r, 50));
    writeFileSync(join(agents, 'echo', 'config.yaml'), echo('saved during the start'));
    rmSync(join(agents, 'other'), { recursive: true });
    rmSync(join(agents, 'greeter', 'system-prompt.md')); // a prompt deleted: its folder changed
    const stop = edited.watch((how) => reasons.push(how));
    try {
      await expect.poll(() => reasons.length, { timeout: 5_000 }).toBeGreaterThanOrEqual(1);
      expect(reasons[0]).toContain('agents/echo/config.yaml');
      expect(reasons[0]).toContain('agents/greeter/system-prompt.md');
      expect(reasons[0]).toContain('agents/other/config.yaml');
    } finally {
      stop();
    }
  });
});

/** A store that can be switched off, in front of a real folder. */
class FlakyStore implements DefinitionStore {
  readonly location = 'flaky';
  down = false;
  loads = 0;
  readonly #inner: LocalFolderStore;
  constructor(dir: string) {
    this.#inner = new LocalFolderStore(dir);
  }
  async load(): Promise<LoadResult> {
    this.loads++;
    if (this.down) throw new StoreUnavailableError(this.location, 'connection refused');
    return this.#inner.load();
  }
  watch(): () => void {
    return () => undefined;
  }
}

describe('unreachable store', () => {
  it('keeps the last good definitions, logs, retries with backoff and recovers', async () => {
    const dir = makeAgentsDir({ echo: { config: echo('kept'), prompt: 'x' } });
    const store = new FlakyStore(dir);
    const logs: string[] = [];
    const logger = pino({ level: 'debug' }, { write: (l: string) => void logs.push(l) });
    const registry = new AgentRegistry({ store, executors: new ExecutorRegistry(new LlmExecutor({ secret: () => undefined })), logger });
    const reloader = new Reloader({ reload: () => registry.reload(), logger, initialRetryMs: 20, maxRetryMs: 80 });
    try {
      await reloader.trigger('start');
      expect(registry.runnable().has('echo')).toBe(true);

      store.down = true;
      writeFileSync(join(dir, 'echo', 'config.yaml'), echo('new'));
      await reloader.trigger('change');
      expect(registry.get('echo')?.config.brain.responses).toEqual(['kept']);
      expect(logs.join('\n')).toMatch(/definitions store unreachable; keeping the last good definitions/);
      await expect.poll(() => store.loads, { timeout: 2_000 }).toBeGreaterThanOrEqual(4); // retried on its own

      store.down = false;
      await expect.poll(() => registry.get('echo')?.config.brain.responses?.[0], { timeout: 2_000 }).toBe('new');
      const settled = store.loads;
      await new Promise((r) => setTimeout(r, 250));
      expect(store.loads).toBe(settled); // no more retries once it loaded
    } finally {
      reloader.stop();
    }
  });

  it('runs one reload at a time: a burst of triggers during a reload queues exactly one more', async () => {
    let running = 0;
    let maxRunning = 0;
    let calls = 0;
    let release: (() => void) | undefined;
    const reloader = new Reloader({
      reload: async () => {
        calls++;
        running++;
        maxRunning = Math.max(maxRunning, running);
        await new Promise<void>((r) => (release = r));
        running--;
        return true;
      },
      logger: pino({ level: 'silent' }),
    });
    const first = reloader.trigger('a');
    await expect.poll(() => calls).toBe(1);
    const burst = [reloader.trigger('b'), reloader.trigger('c'), reloader.trigger('d')];
    release?.();
    await expect.poll(() => calls).toBe(2); // b, c and d folded into one follow-up
    release?.();
    await Promise.all([first, ...burst]);
    expect(calls).toBe(2);
    expect(maxRunning).toBe(1);
    reloader.stop();
  });

  it('backs off by doubling up to the cap', () => {
    expect([1, 2, 3, 4, 5, 10].map((n) => retryDelay(n, 1000, 8000))).toEqual([1000, 2000, 4000, 8000, 8000, 8000]);
  });
});
