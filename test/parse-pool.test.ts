// Definitions parsed on worker threads (store/parse-pool.ts) are exactly the ones the loading thread makes: every
// malformed fixture keeps its file:line:column problems, a store of thousands loads the same agents and problems
// with threads as without (compared strictly), and a thread that cannot start or dies changes nothing but speed.
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadFromReader, type StoreReader } from '../store/layout.ts';
import { LocalFolderStore } from '../store/local-store.ts';
import { parseAgentSafely, type RawAgentFiles } from '../store/parse-definition.ts';
import { MIN_AGENTS_FOR_THREADS, ParsePool, parseThreadCount } from '../store/parse-pool.ts';
import { formatProblem } from '../store/problems.ts';

const MALFORMED = join(import.meta.dirname, 'fixtures', 'malformed');
const CASES = readdirSync(MALFORMED).sort();

/** A malformed fixture's agents as the loader hands them to a parse, named as `expected.txt` names them. */
function caseFiles(name: string): RawAgentFiles[] {
  const agents = join(MALFORMED, name, 'agents');
  return readdirSync(agents)
    .sort()
    .map((folder) => {
      const prompt = join(agents, folder, 'system-prompt.md');
      return {
        folder,
        configFile: `agents/${folder}/config.yaml`,
        configText: readFileSync(join(agents, folder, 'config.yaml'), 'utf8'),
        promptFile: `agents/${folder}/system-prompt.md`,
        promptText: existsSync(prompt) ? readFileSync(prompt, 'utf8') : undefined,
      };
    });
}

/**
 * Valid agents of many shapes (fast path and positional path, defaults, every optional block, values the two
 * parsers and a structured clone could disagree on: -0, .inf, .nan, an own `__proto__` key), and a few with
 * warnings or cross-check errors.
 */
function fillerConfig(name: string, i: number): string {
  const base = `name: ${name}\ntype: llm\nbrain:\n  provider: openai\n  model: m-${i % 7}\n  api_key_env: KEY_${i % 3}\ncapabilities:\n  grants: [hub:read, hub:write]\n`;
  switch (i % 10) {
    case 0:
      return base;
    case 1:
      return `${base}behavior:\n  quiet_hours: {start: "22:00", end: "06:00", timezone: Europe/Berlin}\n  max_duration: 90s\nschedules:\n  - {name: daily, cron: "0 9 * * 1-5", task: Say hello, timezone: Asia/Tokyo}\n`;
    case 2:
      // anchors and an alias: the positional path
      return `${base}interests:\n  topics: &t [a, b]\n  keywords: *t\n`;
    case 3:
      return `${base}network: {zero: -0, big: .inf, small: -.inf, nan: .nan, octal: 0o17, hex: 0x1F, "__proto__": {polluted: true}, nothing: ~}\n`;
    case 4:
      return `${base}system_prompt: legacy\n`; // a warning
    case 5:
      return `${base}memory: {enabled: true, retrieval: {strategy: recent}}\napprovals: {tools: [hub_post], timeout: 2h}\n`;
    case 6:
      return base.replace('[hub:read, hub:write]', '[hub:read, hub:wrte, mcp:docs]'); // an error and a warning, located by the positional parser
    case 7:
      return `${base}webhooks:\n  - {name: deploy, secret_env: HOOK_SECRET, task: "Deployed {{body.ref}}"}\nevents: {urls: ["https://example.com/e"], secret_file: /run/s}\na2a: {serve: true, skills: [{id: s1, name: S, description: D}]}\n`;
    case 8:
      return `${base}description: "quoted: with colon"\ndisplay_name: 'single # not a comment'\ncache_ttl: 600\n`;
    default:
      return base.replace(`name: ${name}`, `name: ${name}x`); // name differs from the folder
  }
}

/** A reader of texts in memory (as a bucket's gives them, no local paths), named as the same files in `root`. */
function memoryReader(files: ReadonlyMap<string, string>, root: string): StoreReader {
  return { keys: () => Promise.resolve([...files.keys()]), read: (key) => Promise.resolve(files.get(key)), displayName: (key) => join(root, key) };
}

/** Filler agents interleaved (by name) with every malformed fixture's agents, and a skill, in one store. */
function bigStore(fillers: number): Map<string, string> {
  const files = new Map<string, string>();
  for (let i = 0; i < fillers; i++) {
    const name = `f${String(i).padStart(5, '0')}`;
    files.set(`agents/${name}/config.yaml`, fillerConfig(name, i));
    if (i % 97 !== 13) files.set(`agents/${name}/system-prompt.md`, `You are {{name}}, number ${i}.`);
  }
  for (const c of CASES) {
    for (const raw of caseFiles(c)) {
      // `f<case>…` sorts among the fillers, so broken agents sit in the middle of batches.
      const folder = `f0${c}-${raw.folder}`;
      files.set(`agents/${folder}/config.yaml`, raw.configText);
      if (raw.promptText !== undefined) files.set(`agents/${folder}/system-prompt.md`, raw.promptText);
    }
  }
  files.set('skills/notes/SKILL.md', '---\nname: notes\ndescription: Keep notes\n---\nWrite things down.');
  return files;
}

describe('parseThreadCount', () => {
  it.each([
    [MIN_AGENTS_FOR_THREADS - 1, 8, 0],
    [MIN_AGENTS_FOR_THREADS, 1, 0],
    [MIN_AGENTS_FOR_THREADS, 2, 2],
    [10_000, 2, 0],
    [100_000, 2, 2],
    [100_000, 16, 4],
  ])('%i agents on %i cores: %i threads', (agents, cores, threads) => {
    expect(parseThreadCount(agents, cores)).toBe(threads);
  });
});

describe('the parse pool', () => {
  it('gives every malformed fixture its exact problems (file:line:column) from a parse thread', { timeout: 60_000 }, async () => {
    const pool = new ParsePool(2);
    try {
      const results = await Promise.all(CASES.map((c) => pool.parse(caseFiles(c))));
      CASES.forEach((c, i) => {
        const expected = readFileSync(join(MALFORMED, c, 'expected.txt'), 'utf8').trim().split('\n');
        expect(results[i]!.flatMap((r) => r.problems.map(formatProblem)), c).toEqual(expected);
      });
      expect(pool.parsedOnThreads).toBe(CASES.reduce((n, c) => n + caseFiles(c).length, 0));
    } finally {
      await pool.close();
    }
  });

  it('parses a batch exactly as the loading thread does, strictly equal', { timeout: 60_000 }, async () => {
    const raws = Array.from({ length: 300 }, (_, i): RawAgentFiles => {
      const name = `f${String(i).padStart(5, '0')}`;
      return { folder: name, configFile: `${name}.yaml`, configText: fillerConfig(name, i), promptFile: `${name}.md`, promptText: i % 50 === 7 ? undefined : 'p' };
    });
    const pool = new ParsePool(2);
    try {
      const threaded = await pool.parse(raws);
      expect(pool.parsedOnThreads).toBe(raws.length);
      expect(threaded).toStrictEqual(raws.map(parseAgentSafely));
      // The shapes the clone could have bent came through: -0, infinities, NaN, an own __proto__ key.
      const network = threaded[3]!.definition!.config.network as Record<string, unknown>;
      expect(Object.is(network.zero, -0)).toBe(true);
      expect([network.big, network.small, network.nan]).toStrictEqual([Infinity, -Infinity, NaN]);
      expect(Object.getPrototypeOf(network)).toBe(Object.prototype);
      expect(Object.hasOwn(network, '__proto__')).toBe(true);
    } finally {
      await pool.close();
    }
  });

  it('parses on its threads in an installed warren too (under node_modules, where Node strips no types)', { timeout: 60_000 }, () => {
    const tmp = mkdtempSync(join(tmpdir(), 'warren-installed-pool-'));
    try {
      // What the store's code needs of an installed package (test/package.test.ts installs the whole tarball).
      const pkg = join(tmp, 'node_modules', 'warren');
      for (const part of ['package.json', 'bin', 'store', 'policy']) cpSync(resolve(part), join(pkg, part), { recursive: true });
      symlinkSync(resolve('node_modules'), join(pkg, 'node_modules'));
      // As bin/warren.js starts an installed warren: its hooks registered, then the TypeScript.
      const script = [
        "import { register } from 'node:module';",
        "register('./bin/strip-types-hooks.js', import.meta.url);",
        "const { ParsePool } = await import('./store/parse-pool.ts');",
        'const pool = new ParsePool(1);',
        "const [parsed] = await pool.parse([{ folder: 'abc', configFile: 'c.yaml', configText: 'name: abc\\ntype: llm\\nbrain: {model: m}\\ncapabilities: {}\\n', promptFile: 'p.md', promptText: 'p' }]);",
        'await pool.close();',
        'console.log(JSON.stringify({ name: parsed.definition?.name, onThreads: pool.parsedOnThreads }));',
      ].join('\n');
      writeFileSync(join(pkg, 'try.js'), script);
      const out = execFileSync(process.execPath, [join(pkg, 'try.js')], { cwd: pkg, encoding: 'utf8' });
      expect(JSON.parse(out)).toEqual({ name: 'abc', onThreads: 1 });
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  });

  it('parses here when its thread cannot start, or dies with batches in hand: the same results', { timeout: 60_000 }, async () => {
    const raws = caseFiles('yaml-bad-indent').concat(caseFiles('key-brain-modle'));
    const expected = raws.map(parseAgentSafely);
    const cannotStart = new ParsePool(1, new URL('data:text/javascript,throw new Error("no thread today")'));
    const dies = new ParsePool(1, new URL('data:text/javascript,import { parentPort } from "node:worker_threads"; parentPort.on("message", () => process.exit(3));'));
    try {
      for (const pool of [cannotStart, dies]) {
        const first = await pool.parse(raws);
        const second = await pool.parse(raws); // no thread left: parsed here at once
        // Paths a thread would read: read here instead (by the loader's own reading, given as readHere).
        const paths = raws.map((r) => ({ folder: r.folder, configFile: r.configFile, configPath: '/nowhere/c.yaml', promptFile: r.promptFile, promptPath: '/nowhere/p.md' }));
        const third = await pool.readAndParse(paths, () => Promise.resolve(raws));
        expect(first).toStrictEqual(expected);
        expect(second).toStrictEqual(expected);
        expect(third).toStrictEqual(expected);
        expect(pool.parsedOnThreads).toBe(0);
      }
    } finally {
      await Promise.all([cannotStart.close(), dies.close()]);
    }
  });
});

describe('a store loaded with parse threads', () => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('loads the same agents and problems as without, strictly equal, malformed files among thousands', { timeout: 180_000 }, async () => {
    const files = bigStore(3_000);
    const root = mkdtempSync(join(tmpdir(), 'warren-parse-pool-'));
    dirs.push(root);
    for (const [key, text] of files) {
      mkdirSync(join(root, key, '..'), { recursive: true });
      writeFileSync(join(root, key), text);
    }
    const reader = memoryReader(files, root);
    const inline = await loadFromReader(reader, { parseThreads: 0 });
    // Texts sent to the threads (a bucket's reader), and paths the threads read themselves (a folder).
    const threaded = await loadFromReader(reader, { parseThreads: 2 });
    const folderThreaded = await new LocalFolderStore(root, { parseThreads: 2 }).load();
    const folderInline = await new LocalFolderStore(root, { parseThreads: 0 }).load();
    const configs = [...files.keys()].filter((k) => k.endsWith('/config.yaml')).length;
    expect([inline, threaded, folderThreaded, folderInline].map((l) => l.parsedOnThreads)).toEqual([0, configs, configs, 0]);
    const { parsedOnThreads: _a, ...inlineRest } = inline;
    for (const load of [threaded, folderThreaded, folderInline]) {
      const { parsedOnThreads: _b, ...rest } = load;
      expect(rest).toStrictEqual(inlineRest);
    }
    // Not a comparison of two empty loads: most fillers load, and every kind of problem is there.
    expect(threaded.agents.length).toBeGreaterThan(2_000);
    expect(threaded.problems.filter((p) => p.severity === 'warning').length).toBeGreaterThan(300);
    expect(threaded.problems.map(formatProblem)).toContain(`${root}/agents/f0yaml-bad-indent-agent-x/config.yaml:5:4: YAML syntax: "model" is indented deeper than the line above, which already has a value (keys of one mapping line up)`);
  });

  it('a folder of thousands parsed on threads: its one broken file keeps its file:line:column', { timeout: 120_000 }, async () => {
    const root = mkdtempSync(join(tmpdir(), 'warren-parse-pool-'));
    dirs.push(root);
    const count = 4_001;
    for (let i = 0; i < count - 1; i++) {
      const name = `a${String(i).padStart(5, '0')}`;
      mkdirSync(join(root, 'agents', name), { recursive: true });
      writeFileSync(join(root, 'agents', name, 'config.yaml'), `name: ${name}\ntype: llm\nbrain:\n  model: m\ncapabilities:\n  grants: [hub:read]\n`);
      writeFileSync(join(root, 'agents', name, 'system-prompt.md'), 'You are {{name}}.');
    }
    cpSync(join(MALFORMED, 'yaml-unclosed-flow', 'agents', 'agent-x'), join(root, 'agents', 'a02000-x'), { recursive: true });
    const expected = readFileSync(join(MALFORMED, 'yaml-unclosed-flow', 'expected.txt'), 'utf8').trim().replaceAll('agents/agent-x/', `${root}/agents/a02000-x/`);
    const result = await new LocalFolderStore(root, { parseThreads: 2 }).load();
    expect(result.agents.length).toBe(count - 1);
    expect(result.problems.map(formatProblem).join('\n')).toBe(expected);
    expect(result.parsedOnThreads).toBe(count);
    // By default a store this size parses on the loading thread (starting threads would cost more than they save).
    expect(parseThreadCount(count, availableParallelism())).toBe(0);
  });
});
