// Helpers for CLI executor tests: an agent definition from a config object, a parser run over a fixture.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { EventLog } from '../../agent-loop/events.ts';
import type { ActivationInput } from '../../executors/executor.ts';
import type { OutputParser } from '../../executors/cli/adapter.ts';
import type { SupervisedExit } from '../../executors/cli/supervisor.ts';
import { AgentConfigSchema, type AgentConfigInput } from '../../store/agent-config.ts';
import type { AgentDefinition } from '../../store/definition.ts';

export const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'cli');
export const FAKE_CLIS = join(import.meta.dirname, '..', 'fakes', 'cli');

export function definition(config: Partial<AgentConfigInput> & Pick<AgentConfigInput, 'type'>): AgentDefinition {
  const parsed = AgentConfigSchema.parse({ name: 'coder', brain: { provider: 'anthropic', model: 'claude-sonnet-4-5', api_key_env: 'CODER_KEY' }, capabilities: { grants: ['hub:read', 'hub:write'] }, ...config });
  return { name: parsed.name, config: parsed, systemPrompt: 'You are {{name}}.', files: { config: 'config.yaml', prompt: 'system-prompt.md' } };
}

export function activation(def: AgentDefinition, opts: { signal?: AbortSignal; task?: string; system?: string } = {}): ActivationInput {
  const events = new EventLog('act-test-1');
  return { id: 'act-test-1', definition: def, context: { system: opts.system ?? 'You are coder.', task: opts.task ?? 'Say hello.' }, events, signal: opts.signal ?? new AbortController().signal };
}

export function exitOf(code: number | null, extra: Partial<SupervisedExit> = {}): SupervisedExit {
  return { pid: 1234, code, signal: null, stderrTail: '', stdoutBytes: 0, stdoutHead: '', durationMs: 10, ...extra };
}

/** Feeds a fixture file line by line (as the supervisor would) and returns the parser. */
export function feed<P extends OutputParser>(parser: P, fixture: string): P {
  for (const line of readFileSync(join(FIXTURES, fixture), 'utf8').split('\n')) if (line) parser.line(line);
  return parser;
}
