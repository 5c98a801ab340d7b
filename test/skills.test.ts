import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { programLookup } from '../executors/cli/cli-executor.ts';
import type { Notification, Post } from '../hub-client/types.ts';
import { buildNotificationContext } from '../prompts/context.ts';
import { keywordMatches, selectSkills } from '../prompts/skills.ts';
import { hasGrant } from '../store/grants.ts';
import { AgentConfigSchema } from '../store/agent-config.ts';
import { builtinSkills } from '../store/builtin-skills.ts';
import { LocalFolderStore } from '../store/local-store.ts';
import { parseSkill, splitFrontmatter } from '../store/skill.ts';

const skill = (name: string, front: string, body = 'Do it.') => parseSkill(`skills/${name}/SKILL.md`, `---\n${front}\n---\n${body}\n`, name).skill!;
const config = (grants: string[], skills: string[] = []) => AgentConfigSchema.parse({ name: 'abc', type: 'llm', brain: { model: 'm' }, capabilities: { grants, skills } });

describe('skills', () => {
  it('ships hub-post, hub-search and budget-check', () => {
    expect(builtinSkills().map((s) => [s.name, s.requiresGrants])).toEqual([
      ['budget-check', ['hub:read']],
      ['hub-post', ['hub:write']],
      ['hub-search', ['hub:read']],
    ]);
  });

  it('checks grants exactly or by service:*, never by a shared prefix', () => {
    expect(hasGrant(['hub:write'], 'hub:write')).toBe(true);
    expect(hasGrant(['hub:*'], 'hub:write')).toBe(true);
    expect(hasGrant(['hub:read'], 'hub:write')).toBe(false);
    expect(hasGrant(['github:*'], 'hub:write')).toBe(false);
  });

  it('matches keywords as whole words, case-insensitively', () => {
    expect(keywordMatches('The CI run failed', 'ci')).toBe(true);
    expect(keywordMatches('a decision', 'ci')).toBe(false);
    expect(keywordMatches('c++ build', 'c++')).toBe(true);
  });

  it('offers built-ins the grants allow, listed skills, and triggered ones; never one whose grants are missing', () => {
    const all = [...builtinSkills(), skill('incident', 'requires_grants: [hub:write]\ntriggers: {keywords: [outage], communities: [m/agent-errors]}'), skill('deploy', 'requires_grants: [github:write]\ntriggers: {keywords: [deploy]}'), skill('notes', 'description: listed only')];
    const names = (grants: string[], listed: string[], text: string, communities: string[] = []) => selectSkills(all, config(grants, listed), { text, communities }).map((s) => s.name);
    expect(names(['hub:read'], [], 'hello')).toEqual(['hub-search']);
    expect(names(['hub:read', 'hub:write'], ['notes', 'budget-check'], 'hello')).toEqual(['hub-post', 'hub-search', 'notes', 'budget-check']);
    expect(names(['hub:write'], [], 'an OUTAGE again')).toEqual(['hub-post', 'incident']);
    expect(names(['hub:write'], [], 'quiet', ['agent-errors'])).toEqual(['hub-post', 'incident']);
    expect(names(['hub:write'], ['deploy'], 'please deploy')).toEqual(['hub-post']); // github:write missing
  });

  it('leaves out a skill whose required programs are not installed here (real PATH lookup)', () => {
    const all = [skill('gitty', 'requires_cli: [git-does-not-exist-here]\ntriggers: {keywords: [commit]}'), skill('shelly', 'requires_cli: [sh]\ntriggers: {keywords: [commit]}')];
    const names = (available?: (cli: string) => boolean) => selectSkills(all, config(['hub:read'], []), { text: 'commit it', communities: [] }, available).map((s) => s.name);
    expect(names()).toEqual(['gitty', 'shelly']); // not checked
    expect(names(programLookup(process.env.PATH))).toEqual(['shelly']);
  });

  it('reads frontmatter with problems at their file line, and a file without frontmatter as all instructions', () => {
    expect(splitFrontmatter('just text')).toEqual({ frontmatter: undefined, body: 'just text' });
    const bad = parseSkill('s/SKILL.md', '---\nname: x\ntriggers:\n  keyword: [a]\n---\nbody', 'x');
    expect(bad.skill).toBeUndefined();
    expect(bad.problems).toMatchObject([{ line: 4, column: 3, message: 'unknown key "keyword" (did you mean "keywords"?)' }]);
    expect(parseSkill('s/SKILL.md', 'Only instructions.', 'plain').skill).toMatchObject({ name: 'plain', instructions: 'Only instructions.', requiresGrants: [] });
  });

  it('loads store skills (replacing a built-in of the same name) and prompt overrides from the store', async () => {
    const root = mkdtempSync(join(tmpdir(), 'warren-skills-'));
    mkdirSync(join(root, 'agents', 'abc'), { recursive: true });
    writeFileSync(join(root, 'agents', 'abc', 'config.yaml'), 'name: abc\ntype: llm\nbrain: {model: m}\ncapabilities: {grants: [hub:read]}\n');
    writeFileSync(join(root, 'agents', 'abc', 'system-prompt.md'), 'You are {{name}}.');
    mkdirSync(join(root, 'skills', 'hub-search'), { recursive: true });
    writeFileSync(join(root, 'skills', 'hub-search', 'SKILL.md'), '---\ndescription: Our own search rules.\nrequires_grants: [hub:read]\n---\nSearch m/runbooks first.\n');
    mkdirSync(join(root, 'skills', 'broken'), { recursive: true });
    writeFileSync(join(root, 'skills', 'broken', 'SKILL.md'), '---\nrequires_grants: hub:read\n---\nx\n');
    mkdirSync(join(root, 'prompts'));
    writeFileSync(join(root, 'prompts', 'notification-task.md'), 'CUSTOM {{from}} says: {{content}}');
    const r = await new LocalFolderStore(root).load();
    expect(r.problems).toMatchObject([{ file: join(root, 'skills', 'broken', 'SKILL.md'), line: 2, field: 'requires_grants' }]);
    const def = r.agents[0]!;
    const post: Post = { id: 'p', author: { id: '1', name: 'zed' }, content: 'hi', created_at: '2026-01-01T00:00:00Z', comments: [] };
    const n: Notification = { id: 'n', type: 'mention', post_id: 'p', comment_id: null, from: { id: '1', name: 'zed' }, content: 'hi', created_at: '2026-01-01T00:00:00Z', read: false };
    const ctx = buildNotificationContext(def, post, n);
    expect(ctx.task).toBe('CUSTOM zed says: > hi');
    expect(ctx.system).toContain('*Our own search rules.*\n\nSearch m/runbooks first.');
  });
});
