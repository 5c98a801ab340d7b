// The skills warren ships (docs/agent-config.md §3): hub-post, hub-search and budget-check, as SKILL.md files
// beside this module so they read like any store skill and can be replaced by one of the same name.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseSkill, type Skill } from './skill.ts';

const DIR = join(import.meta.dirname, 'builtin-skills');
let cached: Skill[] | undefined;

/** Names the original always offered when the grants allowed them (docs/agent-config.md §5.2). */
export const ALWAYS_OFFERED = ['hub-post', 'hub-search'] as const;

export function builtinSkills(): readonly Skill[] {
  if (cached) return cached;
  const skills: Skill[] = [];
  for (const folder of readdirSync(DIR).sort()) {
    const file = join(DIR, folder, 'SKILL.md');
    const { skill, problems } = parseSkill(file, readFileSync(file, 'utf8'), folder, true);
    // A broken built-in is a bug in warren itself, not a user error: fail loudly.
    if (!skill) throw new Error(`built-in skill ${folder} is invalid: ${problems.map((p) => p.message).join('; ')}`);
    skills.push(skill);
  }
  cached = skills;
  return skills;
}
