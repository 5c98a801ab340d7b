// Which skills an activation sees, and how they read (docs/agent-config.md §3, §5.2). Decisions are pure.
import type { AgentConfig } from '../store/agent-config.ts';
import { ALWAYS_OFFERED } from '../store/builtin-skills.ts';
import { hasGrant } from '../store/grants.ts';
import type { Skill } from '../store/skill.ts';

/** What the task is about, for triggers: its text and the communities of its posts. */
export interface TaskSignals {
  text: string;
  communities: readonly string[];
}

export function grantsAllow(grants: readonly string[], skill: Skill): boolean {
  return skill.requiresGrants.every((r) => hasGrant(grants, r));
}

/** `m/general`, `general` and `M/General` name the same community. */
export function sameCommunity(a: string, b: string): boolean {
  const norm = (c: string): string => c.trim().toLowerCase().replace(/^m\//, '');
  return norm(a) === norm(b);
}

/** A keyword matches as a whole word, case-insensitively ("CI" matches "the CI run", not "decision"). */
export function keywordMatches(text: string, keyword: string): boolean {
  const escaped = keyword.trim().replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  if (!escaped) return false;
  return new RegExp(`(^|[^\\p{L}\\p{N}_])${escaped}($|[^\\p{L}\\p{N}_])`, 'iu').test(text);
}

export function triggered(skill: Skill, task: TaskSignals): boolean {
  const { keywords, communities } = skill.triggers;
  if (keywords.some((k) => keywordMatches(task.text, k))) return true;
  return communities.some((c) => task.communities.some((t) => sameCommunity(c, t)));
}

/**
 * The skills included: held grants, required programs installed (when `cliAvailable` is given), and one of
 * built-in always-offered, listed in `capabilities.skills`, or triggered by the task. Kept in a stable order
 * (always-offered, listed, triggered) so prompts cache well.
 */
export function selectSkills(all: readonly Skill[], config: Pick<AgentConfig, 'capabilities'>, task: TaskSignals, cliAvailable?: (cli: string) => boolean): Skill[] {
  const { grants, skills: listed } = config.capabilities;
  const chosen: Skill[] = [];
  const add = (s: Skill | undefined): void => {
    if (s && !chosen.includes(s) && grantsAllow(grants, s) && (!cliAvailable || s.requiresCli.every(cliAvailable))) chosen.push(s);
  };
  const byName = new Map(all.map((s) => [s.name, s]));
  for (const name of ALWAYS_OFFERED) add(byName.get(name));
  for (const name of listed) add(byName.get(name));
  for (const s of all) if (triggered(s, task)) add(s);
  return chosen;
}

export function renderSkills(skills: readonly Skill[]): string {
  if (skills.length === 0) return '';
  const parts = skills.map((s) => [`### ${s.name}`, s.description ? `*${s.description}*` : '', s.instructions, '---'].filter(Boolean).join('\n\n'));
  return ['## Available Skills', ...parts].join('\n\n');
}
