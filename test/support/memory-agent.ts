// The agent the memory end-to-end tests tell things to and ask again: an LLM agent on a fake OpenAI-compatible
// server, memory on, a low relevance threshold so a short question finds what it was told.
export function keeperDefinition(apiBase: string, strategy = 'keyword'): string {
  return `name: keeper
type: llm
brain:
  provider: openai
  model: fake-gpt
  api_base: ${apiBase}
  api_key_env: KEEPER_API_KEY
capabilities:
  grants: [hub:read, hub:write]
behavior:
  limits: {min_interval_seconds: 0}
memory:
  enabled: true
  retrieval:
    strategy: ${strategy}
    max_context_items: 5
    relevance_threshold: 0.3
`;
}
