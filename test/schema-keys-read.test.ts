// Every key the agent schema accepts has an effect (issue 33 item 5; store/agent-config.ts, docs/agent-config.md):
// the schema is walked (as its JSON Schema, every property of every object, union branch and list item) and each
// path must name the module that reads it and what that module reads it by; the module is searched for it. A new
// key without a reader fails here, and so does a reader that no longer reads its key. The only keys allowed no
// reader are those other parts of issue 33 build, named below with the item that builds them.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { claudeInvocation } from '../executors/cli/claude-code.ts';
import { opencodePermission } from '../executors/cli/opencode.ts';
import { buildExplorationContext } from '../prompts/exploration.ts';
import type { AgentDefinition } from '../store/definition.ts';
import { agentConfigJsonSchema } from '../store/json-schema.ts';
import { parseDefinition } from '../store/parse-definition.ts';

/** Keys accepted before they are built: each names who builds it. Nothing else may be here. */
const PENDING: Readonly<Record<string, string>> = {
};

/** Each schema path → the file that reads it and a piece of code that is its reading there. */
const READERS: Readonly<Record<string, { file: string; reads: string }>> = {
  version: { file: 'store/parse-definition.ts', reads: 'config.version' },
  name: { file: 'store/parse-definition.ts', reads: 'config.name' },
  display_name: { file: 'daemon/agent-registry.ts', reads: 'def.config.display_name' },
  description: { file: 'prompts/context.ts', reads: "def.config.description ?? ''" },
  type: { file: 'store/agent-config.ts', reads: "config.type === 'native'" },

  brain: { file: 'executors/llm/llm-executor.ts', reads: 'const brain = def.config.brain' },
  'brain.provider': { file: 'executors/llm/llm-executor.ts', reads: "brain.provider === 'scripted'" },
  'brain.model': { file: 'executors/llm/llm-executor.ts', reads: 'modelName: config.brain.model' },
  'brain.exploration_model': { file: 'activation/activation-model.ts', reads: 'exploration_model' },
  'brain.temperature': { file: 'executors/llm/llm-executor.ts', reads: 'temperature: config.brain.temperature' },
  'brain.max_tokens': { file: 'executors/llm/llm-executor.ts', reads: 'maxTokens: config.brain.max_tokens' },
  'brain.api_base': { file: 'executors/llm/llm-executor.ts', reads: 'brain.api_base' },
  'brain.api_key_env': { file: 'executors/llm/llm-executor.ts', reads: 'this.#opts.secret(brain.api_key_env)' },
  'brain.fallback_models': { file: 'executors/llm/llm-executor.ts', reads: 'fallbackModels: config.brain.fallback_models' },
  'brain.tool_mode': { file: 'executors/llm/llm-executor.ts', reads: 'resolveToolMode(config.brain.tool_mode' },
  'brain.responses': { file: 'executors/llm/llm-executor.ts', reads: 'new ScriptedChatModel(brain.responses' },
  'brain.responses[].content': { file: 'executors/llm/scripted-model.ts', reads: 'r.content' },
  'brain.responses[].tool_calls': { file: 'executors/llm/scripted-model.ts', reads: 'r.tool_calls' },
  'brain.responses[].tool_calls[].id': { file: 'executors/llm/scripted-model.ts', reads: 'c.id' },
  'brain.responses[].tool_calls[].name': { file: 'executors/llm/scripted-model.ts', reads: 'c.name' },
  'brain.responses[].tool_calls[].arguments': { file: 'executors/llm/scripted-model.ts', reads: 'c.arguments' },
  'brain.responses[].usage': { file: 'executors/llm/scripted-model.ts', reads: 'r.usage' },
  'brain.responses[].usage.prompt_tokens': { file: 'executors/llm/scripted-model.ts', reads: 'r.usage?.prompt_tokens' },
  'brain.responses[].usage.completion_tokens': { file: 'executors/llm/scripted-model.ts', reads: 'r.usage?.completion_tokens' },
  'brain.responses[].finish_reason': { file: 'executors/llm/scripted-model.ts', reads: 'r.finish_reason' },
  'brain.responses[].delay_ms': { file: 'executors/llm/scripted-model.ts', reads: 'r.delay_ms' },
  'brain.responses[].error': { file: 'executors/llm/scripted-model.ts', reads: 'r.error' },
  'brain.responses[].error.status': { file: 'executors/llm/scripted-model.ts', reads: 'r.error.status' },
  'brain.responses[].error.message': { file: 'executors/llm/scripted-model.ts', reads: 'r.error.message' },
  'brain.responses[].error.retry_after': { file: 'executors/llm/scripted-model.ts', reads: 'r.error.retry_after' },

  capabilities: { file: 'executors/llm/llm-executor.ts', reads: 'config.capabilities' },
  'capabilities.grants': { file: 'memory/memory-grants.ts', reads: 'config.capabilities.grants' },
  'capabilities.skills': { file: 'prompts/skills.ts', reads: 'skills: listed } = config.capabilities' },
  'capabilities.mcp_servers': { file: 'executors/llm/llm-executor.ts', reads: 'connectMcpServers(config.capabilities.mcp_servers' },
  'capabilities.mcp_servers[].name': { file: 'agent-loop/mcp-tools.ts', reads: 'mcpServerGrant(s.name)' },
  'capabilities.mcp_servers[].command': { file: 'agent-loop/mcp-tools.ts', reads: 'command: s.command' },
  'capabilities.mcp_servers[].args': { file: 'agent-loop/mcp-tools.ts', reads: 'args: s.args' },
  'capabilities.mcp_servers[].env': { file: 'agent-loop/mcp-tools.ts', reads: 's.env' },
  'capabilities.mcp_servers[].url': { file: 'agent-loop/mcp-tools.ts', reads: 'new URL(s.url)' },
  'capabilities.mcp_servers[].headers': { file: 'agent-loop/mcp-tools.ts', reads: 's.headers' },
  'capabilities.mcp_servers[].read_only_tools': { file: 'agent-loop/mcp-tools.ts', reads: 's.read_only_tools' },
  'capabilities.shell': { file: 'executors/cli/claude-code.ts', reads: 'def.config.capabilities.shell' },
  'capabilities.shell.enabled': { file: 'executors/cli/claude-code.ts', reads: 'shell.enabled' },
  'capabilities.shell.allowed_commands': { file: 'executors/cli/claude-code.ts', reads: 'shell.allowed_commands' },
  'capabilities.shell.blocked_patterns': { file: 'executors/cli/claude-code.ts', reads: 'shell.blocked_patterns' },
  'capabilities.shell.timeout_seconds': { file: 'executors/cli/claude-code.ts', reads: 'shell.timeout_seconds' },
  'capabilities.delegates': { file: 'executors/llm/llm-executor.ts', reads: 'input.definition.config.capabilities.delegates' },
  'capabilities.spawning': { file: 'activation/spawn-proposals.ts', reads: 'const spawning = proposer.config.capabilities.spawning' },
  'capabilities.spawning.can_propose': { file: 'agent-loop/propose-agent.ts', reads: 's?.can_propose === true' },
  'capabilities.spawning.allowed_templates': { file: 'activation/spawn-proposals.ts', reads: 'allowed: spawning.allowed_templates' },
  'capabilities.spawning.max_pending': { file: 'activation/spawn-proposals.ts', reads: 'spawning.max_pending' },

  interests: { file: 'prompts/exploration.ts', reads: 'def.config.interests' },
  'interests.topics': { file: 'activation/activation.ts', reads: 'interests.topics' },
  'interests.communities': { file: 'prompts/exploration.ts', reads: 'def.config.interests.communities' },
  'interests.keywords': { file: 'activation/activation.ts', reads: 'interests.keywords' },
  'interests.follow_agents': { file: 'prompts/exploration.ts', reads: 'follow_agents.length' },

  behavior: { file: 'activation/activation.ts', reads: 'def.config.behavior' },
  'behavior.respond_to_mentions': { file: 'activation/inbox-policy.ts', reads: 'flags.respond_to_mentions' },
  'behavior.respond_to_replies': { file: 'activation/inbox-policy.ts', reads: 'flags.respond_to_replies' },
  'behavior.respond_to_dms': { file: 'activation/inbox-policy.ts', reads: 'flags.respond_to_dms' },
  'behavior.max_iterations': { file: 'executors/llm/llm-executor.ts', reads: 'maxSteps: config.behavior.max_iterations' },
  'behavior.max_tokens': { file: 'executors/llm/llm-executor.ts', reads: 'config.behavior.max_tokens' },
  'behavior.max_duration': { file: 'activation/activation.ts', reads: 'deadline(def.config.behavior.max_duration' },
  'behavior.can_create_posts': { file: 'agent-loop/hub-tools.ts', reads: 'opts.canCreatePosts === false' },
  'behavior.reply_on_failure': { file: 'activation/worker.ts', reads: 'def?.config.behavior.reply_on_failure' },
  'behavior.quiet_hours': { file: 'scheduler/scheduler.ts', reads: 'config.behavior.quiet_hours' },
  'behavior.quiet_hours.start': { file: 'scheduler/quiet-hours.ts', reads: 'start' },
  'behavior.quiet_hours.end': { file: 'scheduler/quiet-hours.ts', reads: 'end' },
  'behavior.quiet_hours.timezone': { file: 'scheduler/quiet-hours.ts', reads: 'timezone' },
  'behavior.discovery': { file: 'prompts/exploration.ts', reads: 'discovery' },
  'behavior.discovery.enabled': { file: 'scheduler/scheduler.ts', reads: 'discovery.enabled' },
  'behavior.discovery.frequency': { file: 'scheduler/staleness.ts', reads: 'behavior.discovery.frequency' },
  'behavior.discovery.respond_to_questions': { file: 'prompts/exploration.ts', reads: 'discovery.respond_to_questions' },
  'behavior.discovery.respond_to_discussions': { file: 'prompts/exploration.ts', reads: 'discovery.respond_to_discussions' },
  'behavior.discovery.min_confidence': { file: 'prompts/exploration.ts', reads: 'discovery.min_confidence' },
  'behavior.limits': { file: 'scheduler/write-allowance.ts', reads: 'limits' },
  'behavior.limits.max_daily_posts': { file: 'scheduler/write-allowance.ts', reads: 'max_daily_posts' },
  'behavior.limits.max_daily_comments': { file: 'scheduler/write-allowance.ts', reads: 'max_daily_comments' },
  'behavior.limits.max_responses_per_thread': { file: 'scheduler/write-allowance.ts', reads: 'max_responses_per_thread' },
  'behavior.limits.min_interval_seconds': { file: 'scheduler/write-allowance.ts', reads: 'min_interval_seconds' },
  'behavior.limits.max_answer_bytes': { file: 'executors/llm/llm-executor.ts', reads: 'answerBytes: config.behavior.limits.max_answer_bytes' },
  'behavior.limits.max_tool_argument_bytes': { file: 'executors/llm/llm-executor.ts', reads: 'toolArgumentBytes: config.behavior.limits.max_tool_argument_bytes' },
  'behavior.limits.max_cli_output_bytes': { file: 'executors/cli/cli-executor.ts', reads: 'maxOutputBytes: def.config.behavior.limits.max_cli_output_bytes' },

  observability: { file: 'activation/status-poster.ts', reads: 'def?.config.observability' },
  'observability.post_errors': { file: 'activation/error-reporter.ts', reads: 'def.config.observability.post_errors' },
  'observability.post_learnings': { file: 'executors/llm/llm-executor.ts', reads: 'config.observability.post_learnings' },
  'observability.redact_from_posts': { file: 'activation/error-reporter.ts', reads: "observability.redact_from_posts.includes('user_content')" },
  'observability.post_summaries': { file: 'activation/activity-summary-ticker.ts', reads: 'd.config.observability.post_summaries' },
  'observability.summary_schedule': { file: 'activation/activity-summary-ticker.ts', reads: 'def.config.observability.summary_schedule' },

  memory: { file: 'memory/memory-grants.ts', reads: 'config.memory?.enabled' },
  'memory.enabled': { file: 'memory/memory-grants.ts', reads: 'config.memory?.enabled' },
  'memory.remember': { file: 'memory/remember.ts', reads: 'remember.' },
  'memory.remember.conversations_with': { file: 'memory/remember.ts', reads: 'remember.conversations_with' },
  'memory.remember.projects_worked_on': { file: 'memory/remember.ts', reads: 'remember.projects_worked_on' },
  'memory.remember.decisions_made': { file: 'memory/remember.ts', reads: 'remember.decisions_made' },
  'memory.remember.feedback_received': { file: 'memory/remember.ts', reads: 'remember.feedback_received' },
  'memory.max_size_mb': { file: 'memory/agent-memory.ts', reads: 'settings.max_size_mb' },
  'memory.scope': { file: 'memory/audience.ts', reads: "settings.scope === 'agent'" },
  'memory.retrieval': { file: 'memory/agent-memory.ts', reads: 'settings.retrieval' },
  'memory.retrieval.strategy': { file: 'memory/recall-strategy.ts', reads: 'memory.retrieval.strategy' },
  'memory.retrieval.max_context_items': { file: 'memory/agent-memory.ts', reads: 'settings.retrieval.max_context_items' },
  'memory.retrieval.relevance_threshold': { file: 'memory/agent-memory.ts', reads: 'settings.retrieval.relevance_threshold' },

  cache_ttl: { file: 'store/s3-store.ts', reads: 'a.config.cache_ttl' },
  'capabilities.delegates[].name': { file: 'agent-loop/remote-delegation.ts', reads: 'delegateToolName(d.name)' },
  'capabilities.delegates[].card_url': { file: 'agent-loop/remote-delegation.ts', reads: 'opts.cards.get(d.card_url' },
  'capabilities.delegates[].auth': { file: 'agent-loop/remote-delegation.ts', reads: 'd.auth' },
  'capabilities.delegates[].auth.bearer_env': { file: 'agent-loop/a2a-session.ts', reads: 'secret(auth.bearer_env)' },
  'capabilities.delegates[].auth.bearer_file': { file: 'agent-loop/a2a-session.ts', reads: 'readFile(auth.bearer_file' },
  'capabilities.delegates[].timeout': { file: 'agent-loop/remote-delegation.ts', reads: 'Math.min(d.timeout' },
  'capabilities.delegates[].streaming': { file: 'agent-loop/remote-delegation.ts', reads: 'd.streaming' },
  'memory.distill': { file: 'memory/agent-memory.ts', reads: 'settings.distill' },
  webhooks: { file: 'daemon/webhooks/webhook-route.ts', reads: 'config.webhooks' },
  'webhooks[].name': { file: 'daemon/webhooks/webhook-route.ts', reads: 'h.name === name' },
  'webhooks[].secret_env': { file: 'services/secret-ref.ts', reads: 'secrets.get(ref.secret_env)' },
  'webhooks[].secret_file': { file: 'services/secret-ref.ts', reads: 'ref.secret_file' },
  'webhooks[].task': { file: 'daemon/webhooks/webhook-route.ts', reads: 'renderTask(hook.task' },
  'webhooks[].per_minute': { file: 'daemon/webhooks/webhook-route.ts', reads: 'hook.per_minute' },
  events: { file: 'daemon/daemon.ts', reads: 'registry.get(agent)?.config.events' },
  'events.urls': { file: 'daemon/daemon.ts', reads: 'targetsOf(e.urls, e)' },
  'events.secret_env': { file: 'services/secret-ref.ts', reads: 'secrets.get(ref.secret_env)' },
  'events.secret_file': { file: 'services/secret-ref.ts', reads: 'ref.secret_file' },
  approvals: { file: 'activation/approval-pause.ts', reads: 'def.config.approvals' },
  'approvals.tools': { file: 'executors/llm/llm-executor.ts', reads: 'approvalRule(config.approvals.tools)' },
  'approvals.timeout': { file: 'activation/approval-pause.ts', reads: 'approvals?.timeout' },
  'approvals.approvers': { file: 'activation/approval-pause.ts', reads: 'approvals?.approvers' },
  a2a: { file: 'daemon/a2a/a2a-route.ts', reads: 'def.config.a2a?.serve' },
  'a2a.serve': { file: 'daemon/a2a/a2a-route.ts', reads: 'def.config.a2a?.serve === true' },
  'a2a.skills': { file: 'daemon/a2a/a2a-card.ts', reads: 'c.a2a?.skills' },
  'a2a.skills[].id': { file: 'daemon/a2a/a2a-card.ts', reads: 'id: s.id' },
  'a2a.skills[].name': { file: 'daemon/a2a/a2a-card.ts', reads: 'name: s.name' },
  'a2a.skills[].description': { file: 'daemon/a2a/a2a-card.ts', reads: 'description: s.description' },
  'a2a.skills[].tags': { file: 'daemon/a2a/a2a-card.ts', reads: 'tags: s.tags' },
  'a2a.skills[].examples': { file: 'daemon/a2a/a2a-card.ts', reads: 'examples: s.examples' },
  'a2a.max_daily_tasks': { file: 'daemon/a2a/a2a-endpoint.ts', reads: 'def.config.a2a?.max_daily_tasks' },
  schedules: { file: 'scheduler/schedule-ticker.ts', reads: 'd.config.schedules' },
  'schedules[].name': { file: 'scheduler/schedule-ticker.ts', reads: 'scheduleField(def.name, schedule.name)' },
  'schedules[].cron': { file: 'scheduler/schedule-ticker.ts', reads: 'schedule.cron' },
  'schedules[].timezone': { file: 'scheduler/schedule-ticker.ts', reads: 'schedule.timezone' },
  'schedules[].task': { file: 'scheduler/schedule-ticker.ts', reads: 'schedule.task' },
  'schedules[].missed': { file: 'scheduler/schedule-ticks.ts', reads: "f.spec.missed === 'run_once'" },
  // The original runner's keys: read to say they are ignored (a warning at load).
  network: { file: 'store/parse-definition.ts', reads: 'LEGACY_KEYS' },
  system_prompt: { file: 'store/parse-definition.ts', reads: 'LEGACY_KEYS' },
  r2_path: { file: 'store/parse-definition.ts', reads: 'LEGACY_KEYS' },
};

interface JsonNode {
  properties?: Record<string, JsonNode>;
  anyOf?: JsonNode[];
  oneOf?: JsonNode[];
  allOf?: JsonNode[];
  items?: JsonNode;
}

/** Every key path of the schema: `a.b`, list items as `a[]`, union branches merged. */
function schemaPaths(node: JsonNode, prefix = '', out = new Set<string>()): Set<string> {
  for (const [key, child] of Object.entries(node.properties ?? {})) {
    const path = `${prefix}${key}`;
    out.add(path);
    schemaPaths(child, `${path}.`, out);
  }
  for (const branch of [...(node.anyOf ?? []), ...(node.oneOf ?? []), ...(node.allOf ?? [])]) schemaPaths(branch, prefix, out);
  if (node.items) schemaPaths(node.items, prefix.endsWith('.') ? `${prefix.slice(0, -1)}[].` : prefix, out);
  return out;
}

const paths = [...schemaPaths(JSON.parse(agentConfigJsonSchema()) as JsonNode)];
const sources = new Map<string, string>();
const source = (file: string): string => {
  if (!sources.has(file)) sources.set(file, readFileSync(file, 'utf8'));
  return sources.get(file)!;
};

describe('every key of the agent schema is read', () => {
  it('the walk finds the schema\'s keys, nested ones and those of list items', () => {
    expect(paths).toContain('behavior.limits.max_daily_posts');
    expect(paths).toContain('capabilities.mcp_servers[].read_only_tools');
    expect(paths).toContain('brain.responses[].tool_calls[].arguments');
    expect(paths.length).toBeGreaterThan(100);
  });

  it('no key lacks a reader (only the pending ones of issue 33, each naming who builds it)', () => {
    const unread = paths.filter((p) => !(p in READERS) && !(p in PENDING));
    expect(unread, `keys no code reads: add the code that gives each an effect, then its reader here`).toEqual([]);
    expect(Object.keys(PENDING).filter((p) => p in READERS), 'a pending key that has a reader now: move it to READERS').toEqual([]);
  });

  it('each reader reads its key where it says', () => {
    const wrong = Object.entries(READERS)
      .filter(([, r]) => !source(r.file).includes(r.reads))
      .map(([path, r]) => `${path}: ${r.file} has no \`${r.reads}\``);
    expect(wrong).toEqual([]);
  });

  it('the table holds no key the schema no longer has', () => {
    expect([...Object.keys(READERS), ...Object.keys(PENDING)].filter((p) => !paths.includes(p))).toEqual([]);
  });
});

function parse(configText: string): ReturnType<typeof parseDefinition> {
  return parseDefinition({ folder: 'keyed', configFile: 'agents/keyed/config.yaml', configText, promptFile: 'agents/keyed/system-prompt.md', promptText: 'You are {{name}}.' });
}

function agent(extra: string, type = 'claude-code'): AgentDefinition {
  const { definition, problems } = parse(`name: keyed\ntype: ${type}\nbrain: {provider: anthropic, model: sonnet}\ncapabilities:\n  grants: [hub:write]\n${extra}`);
  if (!definition) throw new Error(problems.map((p) => p.message).join('; '));
  return definition;
}

// The keys that had no effect until issue 33 item 5 (behavior.respond_to_dms: test/scripted-model.test.ts "inbox policy").
describe('keys given their effect by issue 33', () => {
  it('version: a later major version of the schema is refused, 1.x is read', () => {
    expect(parse('version: 2.0.0\nname: keyed\ntype: llm\nbrain: {model: m}\ncapabilities: {}\n').problems).toContainEqual(expect.objectContaining({ field: 'version', message: 'schema version 2.0.0 is not one this warren reads (1.x)', severity: 'error' }));
    expect(parse('version: 1.4.0\nname: keyed\ntype: llm\nbrain: {model: m}\ncapabilities: {}\n').definition?.config.version).toBe('1.4.0');
  });

  it('discovery.min_confidence: the exploration guidance says how sure the agent must be', () => {
    const task = (confidence: string): string => buildExplorationContext(agent(`behavior: {discovery: {enabled: true${confidence}}}\n`, 'llm'), []).task;
    expect(task('')).toContain('Answer only when you are at least 70% sure your contribution is right and useful.');
    expect(task(', min_confidence: 0.95')).toContain('at least 95% sure');
  });

  it('shell.blocked_patterns and shell.timeout_seconds reach Claude Code (denials, the shell timeout) and OpenCode (denials last); nothing with the shell off', () => {
    const invocation = (shell: string): ReturnType<typeof claudeInvocation> =>
      claudeInvocation({ activationId: 'a', definition: agent(`  shell: ${shell}\n`), context: { system: '', task: '' }, workspace: '/w', scratch: '/s', stateDir: '/st', apiKey: 'k', mcpServers: [] });
    const on = invocation('{enabled: true, allowed_commands: [git], blocked_patterns: ["git push *", "git reset --hard*"], timeout_seconds: 30}');
    expect(on.args.slice(on.args.indexOf('--disallowedTools'), on.args.indexOf('--disallowedTools') + 2)).toEqual(['--disallowedTools', 'Bash(git push *) Bash(git reset --hard*)']);
    expect(on.env).toMatchObject({ BASH_DEFAULT_TIMEOUT_MS: '30000', BASH_MAX_TIMEOUT_MS: '30000' });
    const off = invocation('{enabled: false, blocked_patterns: ["git push *"], timeout_seconds: 30}');
    expect(off.args).not.toContain('--disallowedTools');
    expect(off.env).not.toHaveProperty('BASH_DEFAULT_TIMEOUT_MS');
    expect(Object.entries(opencodePermission(agent('  shell: {enabled: true, allowed_commands: [git], blocked_patterns: ["git push *"]}\n', 'opencode')).bash as Record<string, string>)).toEqual([
      ['*', 'deny'],
      ['git *', 'allow'],
      ['git push *', 'deny'],
    ]);
  });
});
