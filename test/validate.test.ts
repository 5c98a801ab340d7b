// `warren validate` shows every problem of a definition in one run (schema, name, grants), and checks the grants of
// the services warren knows (store/grants.ts: grantProblems) while other services keep the free form.
import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { grantProblems } from '../store/grants.ts';
import { makeAgentsDir } from './support/daemon-harness.ts';
import { PROCESS_TEST_MS } from './support/ceilings.ts';

describe('grantProblems', () => {
  const cases: Array<[string, string[], string[], Array<{ index: number; severity: string; message: string }>]> = [
    ['hub and memory scopes, whole services', ['hub:read', 'hub:write', 'hub:*', 'memory:read', 'memory:write', 'memory:*'], [], []],
    ['other services keep the free form', ['github:read', 'aws:s3:read:bucket', 'postgres:db:read'], [], []],
    ['a misspelt hub scope', ['hub:read', 'hub:wrte'], [], [{ index: 1, severity: 'error', message: '"hub:wrte" is not a hub grant (did you mean "hub:write"?)' }]],
    ['a hub grant with a resource allows nothing', ['hub:write:m/general'], [], [{ index: 0, severity: 'error', message: '"hub:write:m/general" is not a hub grant; expected one of hub:read, hub:write, hub:*' }]],
    ['a misspelt memory scope', ['memory:raed'], [], [{ index: 0, severity: 'error', message: '"memory:raed" is not a memory grant (did you mean "memory:read"?)' }]],
    ['mcp: a declared server, or all', ['mcp:docs', 'mcp:*'], ['docs'], []],
    ['mcp: a server declared nowhere', ['mcp:dcos'], ['docs', 'github'], [{ index: 0, severity: 'warning', message: '"mcp:dcos" names no MCP server of this agent (capabilities.mcp_servers: docs, github) (did you mean "mcp:docs"?)' }]],
    ['no scope at all is the schema\'s error, not this one', ['hub'], [], []],
    // Service names that are also names of every object's inherited properties are services like any other.
    ['services named like inherited properties keep the free form', ['constructor:read', '__proto__:read', 'tostring:x'], [], []],
  ];
  it.each(cases)('%s', (_name, grants, servers, expected) => {
    expect(grantProblems(grants, servers)).toEqual(expected);
  });
});

describe('warren validate', { timeout: PROCESS_TEST_MS }, () => {
  function validate(dir: string): { status: number | null; stdout: string; stderr: string } {
    const r = spawnSync(process.execPath, [resolve('bin/warren.js'), 'validate', dir], { encoding: 'utf8', env: { ...process.env, WARREN_STORE: '' } });
    return { status: r.status, stdout: r.stdout, stderr: r.stderr };
  }

  it('shows a provider typo, a name that differs from the folder and a misspelt hub grant in one run', () => {
    const config = 'name: scuot\ntype: llm\nbrain:\n  provider: opneai\n  model: gpt-4o-mini\ncapabilities:\n  grants: [hub:read, hub:wrte]\n';
    const dir = makeAgentsDir({ scout: { config, prompt: 'You are {{name}}.' } }, { withGreeter: false });
    const r = validate(dir);
    expect(r.status).toBe(1);
    const lines = r.stderr.trim().split('\n').map((l) => l.slice(l.indexOf('scout/')));
    expect(lines).toEqual([
      'scout/config.yaml:1:7: name: name "scuot" must equal its folder name "scout"',
      'scout/config.yaml:4:13: brain.provider: expected one of: anthropic, openai, google, local, ollama, deepseek, scripted; got "opneai"',
      'scout/config.yaml:7:22: capabilities.grants[1]: "hub:wrte" is not a hub grant (did you mean "hub:write"?)',
    ]);
    expect(r.stdout).toMatch(/^0 agents valid, 3 problems in /);
  });

  it('with the schema satisfied, a misspelt grant is still an error (the agent is not loaded); an undeclared MCP server only warns', () => {
    const config = (grants: string) => `name: scout\ntype: llm\nbrain:\n  provider: scripted\n  model: s\ncapabilities:\n  grants: [${grants}]\n`;
    const typo = validate(makeAgentsDir({ scout: { config: config('hub:read, hub:wrte'), prompt: 'x' } }, { withGreeter: false }));
    expect(typo.status).toBe(1);
    expect(typo.stderr).toMatch(/scout\/config\.yaml:7:22: capabilities\.grants\[1\]: "hub:wrte" is not a hub grant \(did you mean "hub:write"\?\)/);
    expect(typo.stdout).toMatch(/^0 agents valid, 1 problem in /);
    const mcp = validate(makeAgentsDir({ scout: { config: config('hub:read, mcp:docs, github:read'), prompt: 'x' } }, { withGreeter: false }));
    expect(mcp.status).toBe(0);
    expect(mcp.stderr).toMatch(/warning: capabilities\.grants\[1\]: "mcp:docs" names no MCP server of this agent/);
    expect(mcp.stdout).toMatch(/^1 agent valid in /);
  });
});
