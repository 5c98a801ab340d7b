// What a proposed agent may change of the template it comes from (README "Agents that propose agents"): it may
// only narrow it. Every key of the two validated configs is compared by the rule of its path (the longest listed
// prefix); a key no rule names must stay as the template has it, so a key added to the schema later is safe until
// someone decides it may change. Pure: the list of widenings, empty when the proposal only narrows.
import type { AgentConfig } from './agent-config.ts';

/**
 * `free`: anything; `same`: as the template; `kept`: the template's value if it has one (else anything);
 * `subset`/`superset`: a list within / containing the template's; `at_most`/`at_least`: a number no higher / no
 * lower (anything when the template has none); `off_unless`: true only where the template is true.
 */
export type NarrowingRule = 'free' | 'same' | 'kept' | 'subset' | 'superset' | 'at_most' | 'at_least' | 'off_unless';

export const NARROWING_RULES: Readonly<Record<string, NarrowingRule>> = {
  version: 'free',
  name: 'free',
  display_name: 'free',
  description: 'free',
  cache_ttl: 'free',
  interests: 'free',
  'brain.temperature': 'free',
  'brain.tool_mode': 'free',
  'brain.responses': 'free',
  'brain.max_tokens': 'at_most',
  'brain.fallback_models': 'subset',
  'capabilities.grants': 'subset',
  'capabilities.skills': 'subset',
  'capabilities.mcp_servers': 'subset',
  'capabilities.delegates': 'subset',
  'capabilities.shell.enabled': 'off_unless',
  'capabilities.shell.allowed_commands': 'subset',
  'capabilities.shell.blocked_patterns': 'superset',
  'capabilities.shell.timeout_seconds': 'at_most',
  'capabilities.spawning': 'free',
  'capabilities.spawning.can_propose': 'off_unless',
  'capabilities.spawning.allowed_templates': 'subset',
  'capabilities.spawning.max_pending': 'at_most',
  'behavior.respond_to_mentions': 'off_unless',
  'behavior.respond_to_replies': 'off_unless',
  'behavior.respond_to_dms': 'off_unless',
  'behavior.reply_on_failure': 'free',
  'behavior.max_iterations': 'at_most',
  'behavior.max_tokens': 'at_most',
  'behavior.max_duration': 'at_most',
  'behavior.can_create_posts': 'off_unless',
  'behavior.quiet_hours': 'kept',
  'behavior.discovery.enabled': 'off_unless',
  'behavior.discovery.frequency': 'free',
  'behavior.discovery.respond_to_questions': 'off_unless',
  'behavior.discovery.respond_to_discussions': 'off_unless',
  'behavior.discovery.min_confidence': 'at_least',
  'behavior.limits': 'at_most',
  'observability.post_errors': 'free',
  'observability.post_summaries': 'off_unless',
  'observability.post_learnings': 'off_unless',
  'observability.redact_from_posts': 'superset',
  memory: 'free',
  'memory.enabled': 'off_unless',
  'memory.distill': 'off_unless',
  'memory.max_size_mb': 'at_most',
  approvals: 'free',
  'approvals.tools': 'superset',
  webhooks: 'subset',
  schedules: 'subset',
  events: 'kept',
  a2a: 'free',
  'a2a.serve': 'off_unless',
  'a2a.max_daily_tasks': 'at_most',
};

/** One way a proposal goes beyond its template: the key and what is wrong, in words for the model. */
export interface Widening {
  path: string;
  message: string;
}

/** The keys where `proposed` goes beyond `template` (empty: it only narrows). */
export function spawnWidenings(template: AgentConfig, proposed: AgentConfig, rules: Readonly<Record<string, NarrowingRule>> = NARROWING_RULES): Widening[] {
  const paths = new Set([...leafPaths(template), ...leafPaths(proposed)]);
  const out: Widening[] = [];
  for (const path of [...paths].sort()) {
    const rule = ruleOf(path, rules);
    const message = widening(rule, valueAt(template, path), valueAt(proposed, path));
    if (message) out.push({ path, message });
  }
  return out;
}

function widening(rule: NarrowingRule, t: unknown, p: unknown): string | undefined {
  switch (rule) {
    case 'free':
      return undefined;
    case 'same':
      return same(t, p) ? undefined : `must stay ${show(t)} as in the template`;
    case 'kept':
      return t === undefined || same(t, p) ? undefined : `must stay ${show(t)} as in the template`;
    case 'subset': {
      const allowed = new Set(asList(t).map(stable));
      const extra = asList(p).filter((v) => !allowed.has(stable(v)));
      return extra.length ? `may only keep entries of the template's; not in it: ${extra.map(show).join(', ')}` : undefined;
    }
    case 'superset': {
      const kept = new Set(asList(p).map(stable));
      const dropped = asList(t).filter((v) => !kept.has(stable(v)));
      return dropped.length ? `must keep the template's entries; dropped: ${dropped.map(show).join(', ')}` : undefined;
    }
    case 'at_most':
      return typeof t !== 'number' || (typeof p === 'number' && p <= t) ? undefined : `may be at most ${t} (the template's)`;
    case 'at_least':
      return typeof t !== 'number' || (typeof p === 'number' && p >= t) ? undefined : `may be no lower than ${t} (the template's)`;
    case 'off_unless':
      return p !== true || t === true ? undefined : 'may not be turned on: the template has it off';
    default: {
      const never: never = rule;
      throw new Error(`unknown narrowing rule ${String(never)}`);
    }
  }
}

/** The rule of the longest listed prefix of `path`; `same` when none is listed. */
export function ruleOf(path: string, rules: Readonly<Record<string, NarrowingRule>>): NarrowingRule {
  for (let p = path; p !== ''; p = p.includes('.') ? p.slice(0, p.lastIndexOf('.')) : '') {
    const rule = rules[p];
    if (rule) return rule;
  }
  return 'same';
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Dotted paths of every non-object value (lists are values); an empty object is a value too. */
function leafPaths(v: unknown, prefix = ''): string[] {
  if (!isPlainObject(v) || (Object.keys(v).length === 0 && prefix !== '')) return prefix ? [prefix] : [];
  return Object.entries(v).flatMap(([k, child]) => (child === undefined ? [] : leafPaths(child, prefix ? `${prefix}.${k}` : k)));
}

function valueAt(v: unknown, path: string): unknown {
  let cur = v;
  for (const k of path.split('.')) cur = isPlainObject(cur) ? cur[k] : undefined;
  return cur;
}

function asList(v: unknown): unknown[] {
  return Array.isArray(v) ? v : v === undefined ? [] : [v];
}

/** JSON with sorted keys: equal values compare equal whatever order their keys were written in. */
function stable(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(stable).join(',')}]`;
  if (isPlainObject(v)) return `{${Object.keys(v).sort().filter((k) => v[k] !== undefined).map((k) => `${JSON.stringify(k)}:${stable(v[k])}`).join(',')}}`;
  return JSON.stringify(v) ?? 'undefined';
}

function same(a: unknown, b: unknown): boolean {
  return stable(a) === stable(b);
}

function show(v: unknown): string {
  const text = stable(v);
  return text.length > 120 ? `${text.slice(0, 120)}…` : text;
}
