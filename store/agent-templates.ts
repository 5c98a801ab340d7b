// Agent templates (README "Agents that propose agents"): agent definitions in the store's `templates/<name>/`
// folder (config.yaml and system-prompt.md, as an agent's), which an agent with `capabilities.spawning` may propose
// new agents from. A template is validated like an agent when the store loads (its `name` is its folder's), but
// never runs. A proposal is the template with the proposer's overrides merged in, its own name and its purpose as
// the description, validated against the schema and then against the template (store/spawn-narrowing.ts): all
// of that is pure, so the proposer's model is told at once what is wrong.
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import { AGENT_NAME } from './agent-config.ts';
import type { AgentDefinition, AgentTemplate } from './definition.ts';
import { parseDefinition } from './parse-definition.ts';
import type { Problem } from './problems.ts';
import { spawnWidenings } from './spawn-narrowing.ts';

/** What a proposal asks for: the propose_agent tool's arguments, checked. */
export interface SpawnRequest {
  template: string;
  name: string;
  purpose: string;
  overrides: Record<string, unknown>;
}

/** A proposal that passed every check: the two files the new agent's folder will hold. */
export interface ProposedAgent {
  name: string;
  template: string;
  purpose: string;
  configText: string;
  promptText: string;
  definition: AgentDefinition;
}

export type ProposalCheck = { kind: 'ok'; agent: ProposedAgent } | { kind: 'refused'; reasons: string[] };

/** The longest purpose a proposal may give (it becomes the description, which the system prompt may show). */
export const MAX_PURPOSE = 1_000;

/** Reads one template's two files; problems are reported against the template's files (pure). */
export function parseTemplate(files: { folder: string; configFile: string; configText: string; promptFile: string; promptText: string | undefined }): { template?: AgentTemplate; problems: Problem[] } {
  const parsed = parseDefinition(files);
  if (!parsed.definition) return { problems: parsed.problems };
  const raw: unknown = parseYaml(files.configText);
  return { template: { name: files.folder, config: parsed.definition.config, systemPrompt: parsed.definition.systemPrompt, raw: isPlainObject(raw) ? raw : {}, file: files.configFile }, problems: parsed.problems };
}

/**
 * A proposal checked against everything that needs no I/O (pure): the template is allowed and exists, the name is a
 * name, the overrides touch neither name nor description, the merged config passes the schema, and it only narrows
 * the template. Whether the name is free and the proposer has room is the caller's to check.
 */
export function checkProposal(req: SpawnRequest, opts: { allowed: readonly string[]; templates: Readonly<Record<string, AgentTemplate>> }): ProposalCheck {
  if (!opts.allowed.includes(req.template)) return refused(`template "${req.template}" is not one you may propose from (allowed: ${opts.allowed.join(', ') || 'none'})`);
  const template = opts.templates[req.template];
  if (!template) return refused(`template "${req.template}" is not in the store's templates/ folder (there: ${Object.keys(opts.templates).sort().join(', ') || 'none'})`);
  if (!AGENT_NAME.test(req.name) || req.name.length < 3 || req.name.length > 50) return refused(`name "${req.name}": expected 3–50 lowercase letters, digits and inner dashes`);
  for (const key of ['name', 'description']) {
    if (key in req.overrides) return refused(`overrides.${key}: give the ${key === 'name' ? 'name' : 'purpose'} as its own argument, not in overrides`);
  }
  const raw = { ...mergeOverrides(template.raw, req.overrides), name: req.name, description: req.purpose };
  const configText = stringifyYaml(raw);
  const promptText = template.systemPrompt;
  const parsed = parseDefinition({ folder: req.name, configFile: `template ${req.template} with your overrides`, configText, promptFile: `templates/${req.template}/system-prompt.md`, promptText });
  const errors = parsed.problems.filter((p) => p.severity === 'error');
  if (!parsed.definition || errors.length) return { kind: 'refused', reasons: errors.map((p) => `${p.field ? `${p.field}: ` : ''}${p.message}`) };
  const widenings = spawnWidenings(template.config, parsed.definition.config);
  if (widenings.length) return { kind: 'refused', reasons: widenings.map((w) => `${w.path} ${w.message} (a proposal may only narrow its template)`) };
  return { kind: 'ok', agent: { name: req.name, template: req.template, purpose: req.purpose, configText, promptText, definition: parsed.definition } };
}

/** The template's config with the overrides merged in: objects key by key, anything else (lists too) replaced. */
export function mergeOverrides(base: Record<string, unknown>, overrides: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(overrides)) {
    const b = out[k];
    out[k] = isPlainObject(b) && isPlainObject(v) ? mergeOverrides(b, v) : v;
  }
  return out;
}

function refused(reason: string): ProposalCheck {
  return { kind: 'refused', reasons: [reason] };
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
