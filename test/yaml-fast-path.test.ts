// The fast YAML path (store/yaml-validate.ts) reads a file only when it would read it exactly as the positional
// parser does: every definition and fixture of the repository, and a table of scalars where YAML parsers differ,
// give the same data or fall back. And a file it refuses still gets its problems at their line and column.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parseDocument } from 'yaml';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { fastParse, validateYaml } from '../store/yaml-validate.ts';

function yamlFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) return yamlFiles(p);
    return /\.ya?ml$/.test(name) ? [p] : [];
  });
}

/** What the positional parser makes of `text`, or undefined when it reports errors. */
function slow(text: string): unknown {
  const doc = parseDocument(text, { uniqueKeys: true });
  return doc.errors.length ? undefined : doc.toJS();
}

describe('the fast YAML path', () => {
  const files = [...yamlFiles('examples'), ...yamlFiles('test/fixtures')];

  it('reads every YAML file of the repository as the positional parser does, or leaves it to it', () => {
    expect(files.length).toBeGreaterThan(50);
    let fastCount = 0;
    for (const f of files) {
      const text = readFileSync(f, 'utf8');
      const fast = fastParse(text);
      if (!fast.ok) continue;
      fastCount++;
      expect(slow(text), f).not.toBeUndefined();
      expect(fast.data, f).toEqual(slow(text));
    }
    // Most plain files take the fast path (the point of it).
    expect(fastCount).toBeGreaterThan(files.length / 2);
  });

  it.each([
    'a: 017', 'a: 0o17', 'a: 0x1F', 'a: 0b101', 'a: 1_000', 'a: 1e3', 'a: .inf', 'a: -.Inf', 'a: .NaN', 'a: +12',
    'a: yes', 'a: No', 'a: on', 'a: True', 'a: FALSE', 'a: ~', 'a: Null', 'a:', 'a: 2024-01-02', 'a: 2024-01-02T10:00:00Z',
    'a: 12:30', 'a: 1:20:30', 'a: "x\\u00e9"', "a: 'it''s'", 'a: |\n  line\n  two\n', 'a: >-\n  folded\n  text\n',
    'a: [1, two, {b: 3}]', 'a: {b: [c, d]}', 'a: "#not a comment"', 'a: x # comment', 'a: 0.5', 'a: -0', 'a: 00', 'a: 09',
    '? complex\n: key', 'a: !!str 12', 'a: &x 1\nb: *x', 'base: &b {x: 1}\nc:\n  <<: *b', '---\na: 1', 'a: 1\n---\nb: 2',
    'a: 1\na: 2', 'a: {b: 1, b: 2}', '"a": 1', 'a: "\\t"', 'a: [', 'a: 1\n b: 2', '\ta: 1', '- a\n- b', '', '# only a comment',
  ])('%j: same data as the positional parser, or the positional parser decides', (text) => {
    const fast = fastParse(text);
    if (fast.ok) expect(fast.data).toEqual(slow(text));
  });

  it('a file the schema refuses is reported at its line and column, as before', () => {
    const schema = z.strictObject({ name: z.string(), limits: z.strictObject({ per_day: z.number() }) });
    const r = validateYaml('agent.yaml', 'name: ada\nlimits:\n  per_day: many\n', schema);
    expect(r.ok).toBe(false);
    expect(r.problems[0]).toMatchObject({ file: 'agent.yaml', line: 3, column: 12, field: 'limits.per_day' });
    const dup = validateYaml('agent.yaml', 'name: ada\nname: bob\nlimits: {per_day: 1}\n', schema);
    expect(dup.ok).toBe(false);
    expect(dup.problems[0]?.message).toMatch(/duplicate key "name"/);
  });
});
