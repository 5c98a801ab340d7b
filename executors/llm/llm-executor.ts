// The `llm` executor: the in-process agent loop against an OpenAI-compatible endpoint or the scripted model.
import type { ChatModel } from '../../agent-loop/model.ts';
import { noActionTool, taskCompleteTool } from '../../agent-loop/builtin-tools.ts';
import { socialTools } from '../../agent-loop/social-tools.ts';
import { hubTools } from '../../agent-loop/hub-tools.ts';
import { learningTool } from '../../agent-loop/learning-tool.ts';
import { offersProposals, proposeAgentTool, type SpawnProposals } from '../../agent-loop/propose-agent.ts';
import type { AgentMemory } from '../../memory/agent-memory.ts';
import { effectiveGrants } from '../../memory/memory-grants.ts';
import { GENERAL_ONLY } from '../../memory/audience.ts';
import { memoryTools } from '../../memory/memory-tools.ts';
import { delegationTools } from '../../agent-loop/delegation.ts';
import { AgentCardCache } from '../../agent-loop/a2a-card.ts';
import { remoteDelegationTools } from '../../agent-loop/remote-delegation.ts';
import { EventLog } from '../../agent-loop/events.ts';
import { resumeLoop, runLoop, type LoopInput, type LoopResult } from '../../agent-loop/loop.ts';
import { approvalRule } from '../../agent-loop/approval-rule.ts';
import { connectMcpServers } from '../../agent-loop/mcp-tools.ts';
import type { RetryPolicy } from '../../agent-loop/model-caller.ts';
import { resolveToolMode } from '../../agent-loop/tool-modes.ts';
import { ToolRegistry, type Tool } from '../../agent-loop/tools.ts';
import { costOf, DEFAULT_PRICES, type Price, type PriceTable } from '../../agent-loop/usage-ledger.ts';
import type { DistillReply, DistillRequest } from '../../memory/distiller.ts';
import type { WriteAllowance } from '../../scheduler/write-allowance.ts';
import type { ScriptedReply } from '../../store/agent-config.ts';
import type { AgentDefinition } from '../../store/definition.ts';
import { buildActivationContext } from '../../prompts/activation-context.ts';
import { ExecutorSetupError, type ActivationInput, type Executor, type ExecutorResult } from '../executor.ts';
import type { FetchFn } from './cassette.ts';
import { OpenAIChatModel } from './openai-model.ts';
import { isFailure, outcomeOfRun } from '../run-outcome.ts';
import { ScriptedChatModel } from './scripted-model.ts';

export interface LlmExecutorOptions {
  /** Looks up a secret by env var name; the only way keys reach the executor (never job data). */
  secret: (name: string) => string | undefined;
  /** Endpoint for agents without `brain.api_base` (the daemon passes OPENAI_BASE_URL). */
  defaultApiBase?: string;
  /** WARREN_MOCK_RESPONSES: every LLM agent answers from these replies instead of its model (a dry run). */
  mockResponses?: readonly ScriptedReply[];
  stream?: boolean;
  /** USD per 1M tokens by model; default the table of docs/agent-loop.md R9. */
  prices?: PriceTable;
  retry?: RetryPolicy;
  /** Characters of one tool result the model sees (default 16,000). */
  toolOutputCap?: number;
  toolTimeoutMs?: number;
  /** One model HTTP call (default 120 s); a timeout is retried like a network error. */
  modelTimeoutMs?: number;
  /** One step: its model call and its tool calls (default: none beyond behavior.max_duration). */
  stepTimeoutMs?: number;
  /** Models known to lack native tool calling: `brain.tool_mode: auto` uses text mode for them. */
  modelsWithoutTools?: readonly string[];
  /** Context window in tokens by model name (default 128,000): the loop compacts older turns before reaching it. */
  contextWindows?: Readonly<Record<string, number>>;
  /** Agent definitions by name, for delegation (capabilities.delegates); without it no delegate tools are offered. */
  agents?: { get(name: string): AgentDefinition | undefined };
  /** Most delegations deep (A→B is 1); default 2. */
  maxDelegationDepth?: number;
  /** The HTTP client of OpenAI-compatible models (record-and-replay: cassette.ts); default OpenAIChatModel's. */
  fetch?: FetchFn;
  /** Capture prompts, answers and tool payloads in spans, through this redaction (tracing.capture_payloads). */
  tracePayloads?: (text: string) => string;
  /** Tool results pass this redaction before the model sees them (the daemon's redactor). */
  redactToolOutput?: (text: string) => string;
  /** Admits the hub tools' writes against each agent's behavior limits; absent: the tools do not limit them. */
  writes?: WriteAllowance;
  /** Agents with memory on get memory_save and memory_search (memory/memory-tools.ts). */
  memory?: AgentMemory;
  /** The cards of remote (A2A) delegates, shared by every activation; default one of its own. */
  cards?: AgentCardCache;
  /** Where `propose_agent` calls go (capabilities.spawning); absent: the tool is not offered. */
  proposals?: SpawnProposals;
  /** Extra tools for every agent (tests; MCP tools are added per agent). */
  extraTools?: (input: ActivationInput) => Promise<{ tools: Tool[]; close: () => Promise<void> }>;
}

/** The executor's settings from warren.yaml's `executors.llm`. */
export function llmSettings(c: {
  stream: boolean;
  prices: Record<string, Price>;
  context_windows: Record<string, number>;
  models_without_tools: string[];
  tool_output_cap: number;
  tool_timeout: number;
  model_timeout: number;
  step_timeout: number;
}): Pick<LlmExecutorOptions, 'stream' | 'prices' | 'contextWindows' | 'modelsWithoutTools' | 'toolOutputCap' | 'toolTimeoutMs' | 'modelTimeoutMs' | 'stepTimeoutMs'> {
  return {
    stream: c.stream,
    prices: { ...DEFAULT_PRICES, ...c.prices },
    contextWindows: c.context_windows,
    modelsWithoutTools: c.models_without_tools,
    toolOutputCap: c.tool_output_cap,
    toolTimeoutMs: c.tool_timeout,
    modelTimeoutMs: c.model_timeout,
    stepTimeoutMs: c.step_timeout || undefined,
  };
}

export class LlmExecutor implements Executor {
  readonly #opts: LlmExecutorOptions;
  /** One client per endpoint and key: an SDK client per activation cost memory at 1,000 in flight. */
  readonly #clients = new Map<string, OpenAIChatModel>();
  readonly #cards: AgentCardCache;

  constructor(opts: LlmExecutorOptions) {
    this.#opts = opts;
    this.#cards = opts.cards ?? new AgentCardCache();
  }

  /** The cards of remote delegates, as this executor's calls read them (the daemon's start warning, doctor). */
  get cards(): AgentCardCache {
    return this.#cards;
  }

  /** Why this agent cannot run here, or undefined when it can. Checked at load so such agents are skipped loudly. */
  missingRequirement(def: AgentDefinition): string | undefined {
    const brain = def.config.brain;
    if (this.#opts.mockResponses) return undefined; // no model is asked: no key is needed
    if (brain.provider === 'scripted') {
      return brain.responses?.length ? undefined : 'scripted provider without brain.responses (or WARREN_MOCK_RESPONSES)';
    }
    return this.#opts.secret(brain.api_key_env) ? undefined : `its key variable ${brain.api_key_env} (brain.api_key_env) is not set`;
  }

  async run(input: ActivationInput): Promise<ExecutorResult> {
    const { paused, ...result } = await this.#run(input, { chain: [input.definition.name] });
    // A paused run goes on later with the system prompt it had (README "Approvals"): it is handed out with the state.
    return { ...result, usage: { ...result.usage, costUsd: result.costUsd }, ...(paused ? { paused: { ...paused, system: input.context.system } } : {}) };
  }

  /** One run of the loop; a delegate runs through here too, with the chain so far and its carved limits. */
  async #run(input: ActivationInput, d: { chain: string[]; tokenCap?: number; durationCapMs?: number; traceparent?: string }): Promise<LoopResult> {
    const { config } = input.definition;
    const model = this.#model(input.definition);
    const extra = this.#opts.extraTools ? await this.#opts.extraTools(input) : { tools: [], close: () => Promise.resolve() };
    const mcp = await connectMcpServers(config.capabilities.mcp_servers, { grants: config.capabilities.grants, secret: this.#opts.secret, events: input.events, callTimeoutMs: this.#opts.toolTimeoutMs, signal: input.signal });
    try {
      const needsApproval = config.approvals ? approvalRule(config.approvals.tools) : undefined;
      // A delegate's run cannot wait for anyone (only the activation's own run is kept to go on from): a delegate
      // is not offered the tools its approvals name.
      const delegated = d.chain.length > 1;
      const offered: Tool[] = [
        ...(input.hub ? hubTools({ hub: input.hub, agent: input.definition.name, canCreatePosts: config.behavior.can_create_posts, writes: this.#opts.writes?.forAgent(input.definition.name, config.behavior) }) : []),
        ...(input.hub ? socialTools(input.hub, input.definition.name) : []),
        // observability.post_learnings; an agent that may not start posts is not offered a tool that does.
        ...(input.hub && config.observability.post_learnings && config.behavior.can_create_posts ? [learningTool({ hub: input.hub, agent: input.definition.name, writes: this.#opts.writes?.forAgent(input.definition.name, config.behavior) })] : []),
        // capabilities.spawning.can_propose; never to a delegate (a proposal is its agent's own run's to make).
        ...(this.#opts.proposals && offersProposals(input.definition) && d.chain.length === 1 ? [proposeAgentTool({ proposer: input.definition, proposals: this.#opts.proposals })] : []),
        ...extra.tools,
        ...mcp.tools,
        ...this.#delegationTools(input, d.chain),
        ...(await this.#remoteDelegationTools(input, d.chain)),
        ...(this.#opts.memory ? memoryTools(this.#opts.memory, input.definition, input.memoryAudience ?? GENERAL_ONLY) : []),
        taskCompleteTool,
        noActionTool,
      ];
      const tools = delegated && needsApproval ? offered.filter((t) => !needsApproval(t.definition.name)) : offered;
      const loop: Omit<LoopInput, 'task' | 'resume'> = {
        model,
        modelName: config.brain.model,
        fallbackModels: config.brain.fallback_models,
        system: input.context.system,
        temperature: config.brain.temperature,
        maxTokens: config.brain.max_tokens,
        maxSteps: config.behavior.max_iterations,
        maxRunTokens: Math.min(config.behavior.max_tokens, d.tokenCap ?? Infinity),
        maxDurationMs: Math.min(config.behavior.max_duration, d.durationCapMs ?? Infinity),
        signal: input.signal,
        events: input.events,
        tools: new ToolRegistry(tools, effectiveGrants(config)),
        toolMode: resolveToolMode(config.brain.tool_mode, this.#opts.modelsWithoutTools?.includes(config.brain.model)),
        prices: this.#opts.prices,
        retry: this.#opts.retry,
        contextWindowTokens: this.#opts.contextWindows?.[config.brain.model],
        outputBounds: { answerBytes: config.behavior.limits.max_answer_bytes, toolArgumentBytes: config.behavior.limits.max_tool_argument_bytes },
        outputCap: this.#opts.toolOutputCap,
        toolTimeoutMs: this.#opts.toolTimeoutMs,
        stepTimeoutMs: this.#opts.stepTimeoutMs,
        agent: input.definition.name,
        trace: { traceparent: d.traceparent ?? input.traceparent, payloads: this.#opts.tracePayloads },
        redact: this.#opts.redactToolOutput,
        ...(needsApproval && !delegated ? { approval: { needs: needsApproval, ...(input.resume ? { decisions: input.resume.decisions } : {}) } } : {}),
      };
      return input.resume ? await resumeLoop(input.resume.state, { ...loop, keyRoot: input.resume.keyRoot }) : await runLoop({ ...loop, task: input.context.task });
    } finally {
      await Promise.all([extra.close(), mcp.close()]);
    }
  }

  #delegationTools(input: ActivationInput, chain: string[]): Tool[] {
    const agents = this.#opts.agents;
    const delegates = input.definition.config.capabilities.delegates.filter((d) => typeof d === 'string');
    if (!agents || !delegates.length) return [];
    return delegationTools({
      delegates,
      chain,
      maxDepth: this.#opts.maxDelegationDepth,
      events: input.events,
      run: async (agent, task, limits) => {
        const def = agents.get(agent);
        if (!def) throw new Error(`agent ${agent} is not defined here`);
        // The delegate is its own activation: its own definition, context, grants and event stream, run on this loop
        // within the tokens and time carved out of what its parent has left.
        const events = new EventLog(`${input.id}/${agent}`);
        const child = {
          id: events.activationId,
          events,
          // A delegate never pauses (it is not offered the tools that would wait): there is no state to hand out.
          run: async (childInput: ActivationInput) => {
            const { paused: _never, ...r } = await this.#run(childInput, { chain: limits.chain, tokenCap: limits.maxTokens, durationCapMs: limits.maxDurationMs, traceparent: limits.traceparent });
            return r;
          },
        };
        const r = input.delegate
          ? await input.delegate(def, task, child, limits.signal)
          : await child.run({ id: child.id, definition: def, context: buildActivationContext(def, { kind: 'prompt', text: task }), events, signal: limits.signal, hub: input.hub });
        return { text: r.text, termination: r.termination, ledger: r.ledger, error: r.error?.message, failed: isFailure(outcomeOfRun(r)), events: events.events };
      },
    });
  }

  /** Remote (A2A) delegates: no definitions here, their cards say what they are. */
  async #remoteDelegationTools(input: ActivationInput, chain: string[]): Promise<Tool[]> {
    const delegates = input.definition.config.capabilities.delegates.filter((d) => typeof d !== 'string');
    if (!delegates.length) return [];
    return remoteDelegationTools({ delegates, chain, maxDepth: this.#opts.maxDelegationDepth, events: input.events, cards: this.#cards, secret: this.#opts.secret, redact: this.#opts.redactToolOutput, signal: input.signal });
  }

  /**
   * One question to the agent's own model (its brain's endpoint, key and model), no tools and no context: what
   * a hub asks when it needs a short answer the model can give (a Moltbook challenge the solver is unsure of).
   */
  async ask(def: AgentDefinition, question: string, signal?: AbortSignal): Promise<string | undefined> {
    const res = await this.#model(def).complete({ model: def.config.brain.model, messages: [{ role: 'user', content: question }], temperature: 0, maxTokens: 20, signal });
    return res.content ?? undefined;
  }

  /**
   * One request to the agent's own model beside its turn (memory distillation: memory/distiller.ts), no tools:
   * its answer, its usage and what it cost by the price table, so the activation is charged for it.
   */
  async complete(def: AgentDefinition, req: DistillRequest): Promise<DistillReply> {
    const res = await this.#model(def).complete({ model: req.model, messages: req.messages, temperature: 0, maxTokens: req.maxTokens, signal: req.signal });
    return { content: res.content, usage: res.usage, costUsd: costOf(res.model || req.model, res.usage, this.#opts.prices ?? DEFAULT_PRICES) };
  }

  #model(def: AgentDefinition): ChatModel {
    const brain = def.config.brain;
    const missing = this.missingRequirement(def);
    if (missing) throw new ExecutorSetupError(def.name, missing);
    if (this.#opts.mockResponses) return new ScriptedChatModel(this.#opts.mockResponses);
    if (brain.provider === 'scripted') return new ScriptedChatModel(brain.responses ?? []);
    const baseURL = brain.api_base ?? this.#opts.defaultApiBase;
    const apiKey = this.#opts.secret(brain.api_key_env) ?? '';
    // Keyed by the variable's name and value, so a rotated key gets a new client.
    const key = JSON.stringify([baseURL ?? '', brain.api_key_env, apiKey]);
    let model = this.#clients.get(key);
    if (!model) {
      // The loop retries (with fallback models and events); SDK retries underneath would multiply the waits.
      model = new OpenAIChatModel({ baseURL, apiKey, stream: this.#opts.stream, maxRetries: 0, fetch: this.#opts.fetch, timeoutMs: this.#opts.modelTimeoutMs });
      this.#clients.set(key, model);
    }
    return model;
  }
}
