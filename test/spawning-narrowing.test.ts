// A proposed agent may only narrow its template (store/spawn-narrowing.ts, README "Agents that propose agents"):
// one table of template/proposal pairs and the paths each widens; then the templates shipped in examples/ load,
// and a proposal is checked against its template and the schema at once (store/agent-templates.ts).
import { describe, expect, it } from 'vitest';
import { AgentConfigSchema, type AgentConfigInput } from '../store/agent-config.ts';
import { checkProposal, mergeOverrides } from '../store/agent-templates.ts';
import { LocalFolderStore } from '../store/local-store.ts';
import { S3Store } from '../store/s3-store.ts';
import { spawnWidenings } from '../store/spawn-narrowing.ts';
import { startS3, TEST_CREDENTIALS } from './support/s3-server.ts';

const base: AgentConfigInput = {
  name: 'researcher',
  type: 'llm',
  brain: { provider: 'openai', model: 'gpt-4o-mini', max_tokens: 2000 },
  capabilities: { grants: ['hub:read', 'hub:write'], shell: { enabled: false }, mcp_servers: [{ name: 'docs', url: 'https://docs.example/mcp' }] },
  behavior: { max_iterations: 8, can_create_posts: false, limits: { max_daily_comments: 20 } },
  observability: { redact_from_posts: ['api_keys'] },
};
const parsed = (over: Record<string, unknown>) => AgentConfigSchema.parse(mergeOverrides(base, over));

const rows: Array<[string, Record<string, unknown>, string[]]> = [
  ['the template itself', {}, []],
  ['another name, description, interests and temperature', { name: 'rust-researcher', description: 'rust', interests: { topics: ['rust'] }, brain: { temperature: 0.1 } }, []],
  ['fewer grants', { capabilities: { grants: ['hub:read'] } }, []],
  ['a grant beyond the template', { capabilities: { grants: ['hub:read', 'hub:write', 'github:write'] } }, ['capabilities.grants']],
  ['lower limits', { behavior: { max_iterations: 3, limits: { max_daily_comments: 5 } }, brain: { max_tokens: 1000 } }, []],
  ['higher limits', { behavior: { max_iterations: 20, limits: { max_daily_comments: 50 } }, brain: { max_tokens: 4000 } }, ['behavior.limits.max_daily_comments', 'behavior.max_iterations', 'brain.max_tokens']],
  ['a switch turned on', { behavior: { can_create_posts: true }, capabilities: { shell: { enabled: true } } }, ['behavior.can_create_posts', 'capabilities.shell.enabled']],
  ['another model or key variable', { brain: { model: 'gpt-4o', api_key_env: 'OTHER_KEY' } }, ['brain.api_key_env', 'brain.model']],
  ['another MCP server', { capabilities: { mcp_servers: [{ name: 'evil', url: 'https://evil.example/mcp' }] } }, ['capabilities.mcp_servers']],
  ['a redaction dropped', { observability: { redact_from_posts: [] } }, ['observability.redact_from_posts']],
  ['memory turned on', { memory: { enabled: true } }, ['memory.enabled']],
  ['memory given but off', { memory: { enabled: false } }, []],
  ['spawning turned on', { capabilities: { spawning: { can_propose: true, allowed_templates: ['researcher'] } } }, ['capabilities.spawning.allowed_templates', 'capabilities.spawning.can_propose']],
  ['a schedule added', { schedules: [{ name: 'daily', cron: '0 9 * * *', task: 'report' }] }, ['schedules']],
  ['another type', { type: 'claude-code' }, ['type']],
];

describe('spawnWidenings', () => {
  it.each(rows)('%s', (_what, over, widened) => {
    expect(spawnWidenings(parsed({}), parsed(over)).map((w) => w.path)).toEqual(widened);
  });
});

describe('agent templates', () => {
  it('the shipped templates load from examples/templates without problems', async () => {
    const r = await new LocalFolderStore('examples').load();
    expect(Object.keys(r.shared.agentTemplates ?? {}).sort()).toEqual(['code-specialist', 'researcher']);
    expect(r.problems.filter((p) => p.file.includes('templates'))).toEqual([]);
    // A template is no agent: it is never loaded to run.
    expect(r.agents.map((a) => a.name)).not.toContain('researcher');
  });

  it('an S3 bucket holding the same folders loads the same templates', async () => {
    const s3 = await startS3();
    try {
      await s3.upload('examples', 'spawn/');
      const bucket = new S3Store({ location: { bucket: s3.bucket, prefix: 'spawn/' }, endpoint: s3.endpoint, region: 'us-east-1', credentials: TEST_CREDENTIALS, maxAttempts: 1 });
      const fromS3 = await bucket.load();
      bucket.close();
      const fromFolder = await new LocalFolderStore('examples').load();
      const shape = (t: typeof fromS3.shared.agentTemplates) => Object.values(t ?? {}).map((x) => ({ name: x.name, config: x.config, prompt: x.systemPrompt, raw: x.raw }));
      expect(shape(fromS3.shared.agentTemplates)).toEqual(shape(fromFolder.shared.agentTemplates));
      expect(fromS3.shared.agentTemplates?.researcher?.file).toBe(`s3://${s3.bucket}/spawn/templates/researcher/config.yaml`);
    } finally {
      await s3.close();
    }
  });

  it('checks a proposal against the schema and its template, and says why it refuses', async () => {
    const templates = (await new LocalFolderStore('examples').load()).shared.agentTemplates ?? {};
    const check = (req: Partial<Parameters<typeof checkProposal>[0]>, allowed = ['researcher']) => checkProposal({ template: 'researcher', name: 'rust-researcher', purpose: 'Answers questions about Rust.', overrides: {}, ...req }, { allowed, templates });
    const ok = check({ overrides: { interests: { topics: ['rust'] }, behavior: { limits: { max_daily_comments: 5 } } } });
    expect(ok.kind).toBe('ok');
    if (ok.kind !== 'ok') return;
    expect(ok.agent.definition.config.description).toBe('Answers questions about Rust.');
    expect(ok.agent.definition.config.behavior.limits.max_daily_comments).toBe(5);
    expect(ok.agent.configText).toContain('name: rust-researcher');
    expect(check({ template: 'code-specialist' })).toMatchObject({ kind: 'refused', reasons: [expect.stringContaining('not one you may propose from')] });
    expect(check({ template: 'ghost' }, ['ghost'])).toMatchObject({ kind: 'refused', reasons: [expect.stringContaining('not in the store')] });
    expect(check({ name: 'Bad Name' })).toMatchObject({ kind: 'refused', reasons: [expect.stringContaining('lowercase')] });
    expect(check({ overrides: { name: 'x' } })).toMatchObject({ kind: 'refused', reasons: [expect.stringContaining('overrides.name')] });
    expect(check({ overrides: { behavior: { max_iterations: 'many' } } })).toMatchObject({ kind: 'refused', reasons: [expect.stringContaining('behavior.max_iterations')] });
    expect(check({ overrides: { capabilities: { grants: ['hub:read', 'hub:write', 'github:write'] } } })).toMatchObject({ kind: 'refused', reasons: [expect.stringContaining('capabilities.grants may only keep entries')] });
  });
});
