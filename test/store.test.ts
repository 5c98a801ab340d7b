import { cpSync, mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadFromReader, type StoreReader } from '../store/layout.ts';
import { LocalFolderStore } from '../store/local-store.ts';
import { formatProblem } from '../store/problems.ts';

function agentsDir(): string {
  const dir = join(mkdtempSync(join(tmpdir(), 'warren-store-')), 'agents');
  mkdirSync(dir);
  return dir;
}

function writeAgent(dir: string, folder: string, config: string, prompt: string | null = 'You are {{name}}.'): void {
  mkdirSync(join(dir, folder), { recursive: true });
  writeFileSync(join(dir, folder, 'config.yaml'), config);
  if (prompt !== null) writeFileSync(join(dir, folder, 'system-prompt.md'), prompt);
}

const GOOD = `name: good-agent
type: llm
brain:
  provider: scripted
  model: m
  responses: ["hi"]
capabilities: {}
`;

describe('local folder store', () => {
  it('loads the example agents with defaults applied', async () => {
    const { agents, problems } = await new LocalFolderStore('examples/agents').load();
    expect(problems.filter((p) => p.severity === 'error')).toEqual([]);
    const greeter = agents.find((a) => a.name === 'greeter');
    expect(greeter?.config.behavior.max_duration).toBe(300_000);
    expect(greeter?.config.brain.api_key_env).toBe('OPENAI_API_KEY');
    expect(greeter?.config.behavior.respond_to_mentions).toBe(true);
    expect(agents.map((a) => a.name)).toContain('ci-helper');
  });

  it('accepts the store root as well as the agents folder', async () => {
    const { agents } = await new LocalFolderStore('examples').load();
    expect(agents.map((a) => a.name)).toContain('greeter');
  });

  it('reports a broken config with file and line and still loads the good agent beside it', async () => {
    const dir = agentsDir();
    writeAgent(dir, 'good-agent', GOOD);
    writeAgent(dir, 'broken', 'name: broken\ntype: llm\nbrain:\n  model: m\n  temperature: 7\ncapabilities: {}\n');
    const { agents, problems } = await new LocalFolderStore(dir).load();
    expect(agents.map((a) => a.name)).toEqual(['good-agent']);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatchObject({ file: join(dir, 'broken', 'config.yaml'), line: 5, column: 16, field: 'brain.temperature' });
    expect(formatProblem(problems[0]!)).toMatch(/broken\/config\.yaml:5:16: brain\.temperature: .*2/);
  });

  it('reports YAML syntax errors with their position', async () => {
    const dir = agentsDir();
    writeAgent(dir, 'bad-yaml', 'name: bad-yaml\ntype: llm\nbrain: [unclosed\n');
    const { agents, problems } = await new LocalFolderStore(dir).load();
    expect(agents).toEqual([]);
    expect(problems[0]?.message).toMatch(/YAML syntax/);
    expect(problems[0]?.line).toBeGreaterThanOrEqual(3);
  });

  it('reports unknown keys at the key, every problem of the file at once', async () => {
    const dir = agentsDir();
    writeAgent(dir, 'typo', GOOD.replace('good-agent', 'typo') + 'behaviour:\n  max_iterations: 3\nbrain_extra: 1\n');
    const { problems } = await new LocalFolderStore(dir).load();
    expect(problems.map((p) => [p.line, p.field, p.message])).toEqual([
      [8, 'behaviour', 'unknown key "behaviour" (did you mean "behavior"?)'],
      [10, 'brain_extra', 'unknown key "brain_extra"'],
    ]);
  });

  it('rejects a missing system prompt, a name that differs from its folder, and a missing required field', async () => {
    const dir = agentsDir();
    writeAgent(dir, 'no-prompt', GOOD.replace('good-agent', 'no-prompt'), null);
    writeAgent(dir, 'elsewhere', GOOD);
    writeAgent(dir, 'no-model', 'name: no-model\ntype: llm\nbrain:\n  provider: openai\ncapabilities: {}\n');
    const { agents, problems } = await new LocalFolderStore(dir).load();
    expect(agents).toEqual([]);
    const text = problems.map(formatProblem).join('\n');
    expect(text).toMatch(/no-prompt\/system-prompt\.md: missing system prompt/);
    expect(text).toMatch(/elsewhere\/config\.yaml:1:7: name: name "good-agent" must equal its folder name "elsewhere"/);
    expect(text).toMatch(/no-model\/config\.yaml:3:1: brain\.model: required field is missing \(expected text\)/);
  });

  it('warns about legacy keys but loads the agent', async () => {
    const dir = agentsDir();
    writeAgent(dir, 'legacy', GOOD.replace('good-agent', 'legacy') + 'r2_path: agents/legacy\n');
    const { agents, problems } = await new LocalFolderStore(dir).load();
    expect(agents.map((a) => a.name)).toEqual(['legacy']);
    expect(problems).toMatchObject([{ severity: 'warning', field: 'r2_path' }]);
  });

  it('ignores folders without config.yaml', async () => {
    const dir = agentsDir();
    cpSync('examples/agents/greeter', join(dir, 'greeter'), { recursive: true });
    mkdirSync(join(dir, 'notes'));
    const { agents, problems } = await new LocalFolderStore(dir).load();
    expect(agents.map((a) => a.name)).toEqual(['greeter']);
    expect(problems).toEqual([]);
  });

  it('gives the event loop a turn every 500 agents, however fast the reads answer', async () => {
    const files = new Map<string, string>();
    for (let i = 0; i < 1_200; i++) {
      const name = `agent-${String(i).padStart(4, '0')}`;
      files.set(`agents/${name}/config.yaml`, GOOD.replace('good-agent', name));
      files.set(`agents/${name}/system-prompt.md`, 'You are {{name}}.');
    }
    let readsSinceTurn = 0;
    let mostReadsInATurn = 0;
    const reader: StoreReader = {
      keys: () => Promise.resolve([...files.keys()]),
      read: (k) => {
        mostReadsInATurn = Math.max(mostReadsInATurn, ++readsSinceTurn);
        return Promise.resolve(files.get(k));
      },
      displayName: (k) => k,
    };
    let turns = 0;
    let loading = true;
    const spin = (): void => {
      if (!loading) return;
      turns++;
      readsSinceTurn = 0;
      setImmediate(spin);
    };
    setImmediate(spin);
    const { agents, problems } = await loadFromReader(reader);
    loading = false;
    expect(problems).toEqual([]);
    expect(agents.map((a) => a.name)).toEqual([...Array(1_200).keys()].map((i) => `agent-${String(i).padStart(4, '0')}`));
    expect(turns).toBeGreaterThanOrEqual(2);
    // Two files per agent, and the 16 reads already under way when a turn is due finish first.
    expect(mostReadsInATurn).toBeLessThanOrEqual(2 * (500 + 16));
  });
});
