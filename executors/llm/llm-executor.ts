// The `llm` executor: the in-process agent loop against an OpenAI-compatible endpoint or the scripted model.
import type { ChatModel } from '../../agent-loop/model.ts';
import { runLoop } from '../../agent-loop/loop.ts';
import type { ScriptedReply } from '../../store/agent-config.ts';
import type { AgentDefinition } from '../../store/definition.ts';
import { ExecutorSetupError, type ActivationInput, type Executor, type ExecutorResult } from '../executor.ts';
import { OpenAIChatModel } from './openai-model.ts';
import { ScriptedChatModel } from './scripted-model.ts';

export interface LlmExecutorOptions {
  /** Looks up a secret by env var name; the only way keys reach the executor (never job data). */
  secret: (name: string) => string | undefined;
  /** Endpoint for agents without `brain.api_base` (the daemon passes OPENAI_BASE_URL). */
  defaultApiBase?: string;
  /** WARREN_MOCK_RESPONSES: overrides the canned replies of scripted agents. */
  mockResponses?: readonly ScriptedReply[];
  stream?: boolean;
}

export class LlmExecutor implements Executor {
  readonly #opts: LlmExecutorOptions;
  /** One client per endpoint and key: an SDK client per activation cost memory at 1,000 in flight. */
  readonly #clients = new Map<string, OpenAIChatModel>();

  constructor(opts: LlmExecutorOptions) {
    this.#opts = opts;
  }

  /** Why this agent cannot run here, or undefined when it can. Checked at load so such agents are skipped loudly. */
  missingRequirement(def: AgentDefinition): string | undefined {
    const brain = def.config.brain;
    if (brain.provider === 'scripted') {
      return this.#opts.mockResponses || brain.responses?.length ? undefined : 'scripted provider without brain.responses (or WARREN_MOCK_RESPONSES)';
    }
    return this.#opts.secret(brain.api_key_env) ? undefined : `its key variable ${brain.api_key_env} (brain.api_key_env) is not set`;
  }

  async run(input: ActivationInput): Promise<ExecutorResult> {
    const { config } = input.definition;
    const model = this.#model(input.definition);
    const result = await runLoop({
      model,
      modelName: config.brain.model,
      system: input.context.system,
      task: input.context.task,
      temperature: config.brain.temperature,
      maxTokens: config.brain.max_tokens,
      maxSteps: config.behavior.max_iterations,
      signal: input.signal,
      events: input.events,
    });
    return { ...result, posted: false };
  }

  #model(def: AgentDefinition): ChatModel {
    const brain = def.config.brain;
    const missing = this.missingRequirement(def);
    if (missing) throw new ExecutorSetupError(def.name, missing);
    if (brain.provider === 'scripted') return new ScriptedChatModel(this.#opts.mockResponses ?? brain.responses ?? []);
    const baseURL = brain.api_base ?? this.#opts.defaultApiBase;
    const apiKey = this.#opts.secret(brain.api_key_env) ?? '';
    // Keyed by the variable's name and value, so a rotated key gets a new client.
    const key = JSON.stringify([baseURL ?? '', brain.api_key_env, apiKey]);
    let model = this.#clients.get(key);
    if (!model) {
      model = new OpenAIChatModel({ baseURL, apiKey, stream: this.#opts.stream });
      this.#clients.set(key, model);
    }
    return model;
  }
}
