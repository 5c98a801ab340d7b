// warren.yaml's executors.llm settings reach the loop: the price table, the tool output cap.
import { describe, expect, it } from 'vitest';
import { EventLog } from '../agent-loop/events.ts';
import { costOf, DEFAULT_PRICES, priceOf } from '../agent-loop/usage-ledger.ts';
import { WarrenConfigSchema } from '../services/config.ts';
import { LlmExecutor, llmSettings } from '../executors/llm/llm-executor.ts';
import { AgentConfigSchema } from '../store/agent-config.ts';

describe('executors.llm settings', () => {
  it('a configured price table prices the ledger; unknown models fall back by prefix, then to default', async () => {
    const config = WarrenConfigSchema.parse({ executors: { llm: { prices: { 'my-model': { input: 1, output: 2 } }, tool_output_cap: 2000 } } });
    const settings = llmSettings(config.executors.llm);
    expect(settings.toolOutputCap).toBe(2000);
    expect(priceOf('gpt-4o-mini-2024-07-18', DEFAULT_PRICES)).toEqual({ input: 0.15, output: 0.6 });
    expect(priceOf('something-else', DEFAULT_PRICES)).toEqual({ input: 3, output: 15 });
    expect(costOf('gpt-4o', { inputTokens: 1_000_000, outputTokens: 1_000_000, cachedTokens: 0 }, DEFAULT_PRICES)).toBe(20);

    const def = {
      name: 'priced',
      config: AgentConfigSchema.parse({ name: 'priced', type: 'llm', brain: { provider: 'scripted', model: 'my-model', responses: [{ content: 'x', usage: { prompt_tokens: 1_000_000, completion_tokens: 500_000 } }] }, capabilities: {} }),
      systemPrompt: 's',
      files: { config: 'c', prompt: 'p' },
    };
    const ex = new LlmExecutor({ secret: () => undefined, ...settings });
    const r = await ex.run({ id: 'a', definition: def, context: { system: 's', task: 't' }, events: new EventLog('a'), signal: new AbortController().signal });
    expect(r.usage.costUsd).toBe(2);
  });
});
