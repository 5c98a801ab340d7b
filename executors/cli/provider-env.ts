// Where each provider's key goes in a CLI's environment. The agent declares the NAME of the daemon variable
// holding its key (brain.api_key_env); the child receives the value under the name its CLI reads.
import type { AgentConfig } from '../../store/agent-config.ts';

type Provider = AgentConfig['brain']['provider'];

/** The variable CLIs (and litellm, goose, the AI SDK) read for each provider's key. */
export const PROVIDER_KEY_VAR: Readonly<Record<Provider, string | undefined>> = {
  anthropic: 'ANTHROPIC_API_KEY',
  openai: 'OPENAI_API_KEY',
  google: 'GOOGLE_API_KEY',
  deepseek: 'DEEPSEEK_API_KEY',
  ollama: undefined,
  local: undefined,
  scripted: undefined,
};

/** Providers that run without a key (a local model server). */
export function providerNeedsKey(provider: Provider): boolean {
  return PROVIDER_KEY_VAR[provider] !== undefined;
}

/** Why the agent's key is not available, or undefined when it is (or none is needed). */
export function missingKey(config: AgentConfig, secret: (name: string) => string | undefined): string | undefined {
  if (!providerNeedsKey(config.brain.provider)) return undefined;
  return secret(config.brain.api_key_env) ? undefined : `its key variable ${config.brain.api_key_env} (brain.api_key_env) is not set`;
}
