// A skill: SKILL.md with optional YAML frontmatter and Markdown instructions (docs/agent-config.md §3).
import { z } from 'zod';
import type { Problem } from './problems.ts';
import { validateYaml } from './yaml-validate.ts';

export const SkillFrontmatterSchema = z.strictObject({
  name: z.string().regex(/^[a-z0-9][a-z0-9-]*$/, 'expected lowercase letters, digits and dashes').optional(),
  description: z.string().optional(),
  version: z.string().optional(),
  author: z.string().optional(),
  tags: z.array(z.string()).default([]),
  requires_cli: z.array(z.string()).default([]),
  requires_grants: z.array(z.string()).default([]),
  triggers: z
    .strictObject({ keywords: z.array(z.string().min(1)).default([]), communities: z.array(z.string().min(1)).default([]) })
    .prefault({}),
});

export interface Skill {
  name: string;
  description: string;
  version: string | undefined;
  requiresGrants: readonly string[];
  /** Programs the skill's instructions use; it is offered only where they are installed. */
  requiresCli: readonly string[];
  triggers: { keywords: readonly string[]; communities: readonly string[] };
  instructions: string;
  /** Where it was read from, for messages. */
  file: string;
  builtin: boolean;
}

/** Splits `---\nfrontmatter\n---\nbody`; a file without frontmatter is all instructions. */
export function splitFrontmatter(text: string): { frontmatter: string | undefined; body: string } {
  const m = /^---[ \t]*\r?\n([\s\S]*?)\r?\n---[ \t]*(?:\r?\n|$)/.exec(text);
  if (!m) return { frontmatter: undefined, body: text };
  return { frontmatter: m[1] ?? '', body: text.slice(m[0].length) };
}

export function parseSkill(file: string, text: string, folder: string, builtin = false): { skill?: Skill; problems: Problem[] } {
  const { frontmatter, body } = splitFrontmatter(text);
  let meta: z.infer<typeof SkillFrontmatterSchema> = SkillFrontmatterSchema.parse({});
  if (frontmatter !== undefined && frontmatter.trim() !== '') {
    const result = validateYaml(file, frontmatter, SkillFrontmatterSchema);
    // Frontmatter starts on the file's second line, after the opening `---`.
    const problems = result.problems.map((p) => (p.line === undefined ? p : { ...p, line: p.line + 1 }));
    if (!result.ok) return { problems };
    meta = result.value;
  }
  const name = meta.name ?? folder;
  const problems: Problem[] = [];
  if (meta.name !== undefined && meta.name !== folder) {
    problems.push({ file, field: 'name', message: `skill name "${meta.name}" must equal its folder name "${folder}"`, severity: 'error' });
    return { problems };
  }
  return {
    skill: {
      name,
      description: meta.description ?? '',
      version: meta.version,
      requiresGrants: meta.requires_grants,
      requiresCli: meta.requires_cli,
      triggers: meta.triggers,
      instructions: body.trim(),
      file,
      builtin,
    },
    problems,
  };
}
