// Which values the redactor must know: every variable warren.yaml or an agent definition names as holding a
// secret, whatever the name says (an agent's `api_key_env: LEAKY_CRED` is as secret as OPENAI_API_KEY), and
// secrets an agent writes literally into its MCP server env or headers.
import { readFileSync } from 'node:fs';
import type { AgentDefinition } from '../store/definition.ts';
import { PROVIDER_KEY_VAR } from '../executors/cli/provider-env.ts';
import type { WarrenConfig } from './config.ts';
import { looksSecret, secretsFromEnv } from './redact.ts';

/** `${NAME}` references, the form in which MCP env and header values name a daemon secret. */
const REFERENCE = /\$\{([A-Z][A-Z0-9_]*)\}/g;

/** Names of the environment variables holding secrets, by what the config and the definitions say they are. */
export function secretNamesOf(config: Pick<WarrenConfig, 'hub' | 'store'> & { memory?: Pick<WarrenConfig['memory'], 'embeddings'> }, definitions: Iterable<AgentDefinition>): string[] {
  const names = new Set<string>([config.hub.admin_key_env, config.store.access_key_id_env, config.store.secret_access_key_env, ...Object.values(config.hub.agents).flatMap((a) => ('api_key_env' in a ? [a.api_key_env] : a.password_env ? [a.password_env] : []))]);
  if (config.memory?.embeddings?.api_key_env) names.add(config.memory.embeddings.api_key_env);
  for (const def of definitions) {
    const { brain, capabilities } = def.config;
    names.add(brain.api_key_env);
    // Webhook and outbound event secrets: a delivery must never echo one into a task or a log.
    for (const hook of def.config.webhooks ?? []) if (hook.secret_env) names.add(hook.secret_env);
    if (def.config.events?.secret_env) names.add(def.config.events.secret_env);
    // The variable a CLI reads its key from: the daemon may hold a value under that name too.
    const cliVar = PROVIDER_KEY_VAR[brain.provider];
    if (cliVar) names.add(cliVar);
    // A remote (A2A) delegate's bearer token: never in a log, a post or a prompt, whatever the remote side echoes.
    for (const d of capabilities.delegates) if (typeof d !== 'string' && d.auth && 'bearer_env' in d.auth) names.add(d.auth.bearer_env);
    for (const server of capabilities.mcp_servers) {
      if (typeof server === 'string') continue;
      for (const value of Object.values('command' in server ? server.env : server.headers)) {
        for (const m of value.matchAll(REFERENCE)) names.add(m[1]!);
      }
    }
  }
  return [...names];
}

/** Values written into the definitions under a name that says they are secret (`env: {API_TOKEN: abc…}`), and the tokens of remote delegates' `auth.bearer_file`s. */
export function literalSecretsOf(definitions: Iterable<AgentDefinition>): string[] {
  const out: string[] = [];
  for (const def of definitions) {
    for (const d of def.config.capabilities.delegates) {
      if (typeof d === 'string' || !d.auth || !('bearer_file' in d.auth)) continue;
      try {
        const token = readFileSync(d.auth.bearer_file, 'utf8').trim();
        if (token) out.push(token);
      } catch {
        // unreadable: a call says so; there is nothing to hide yet
      }
    }
    for (const server of def.config.capabilities.mcp_servers) {
      if (typeof server === 'string') continue;
      for (const [name, value] of Object.entries('command' in server ? server.env : server.headers)) {
        if (looksSecret(name) && !value.includes('${')) out.push(value);
      }
    }
  }
  return out;
}

/** Every secret value the redactor must hide for this config and these agents. */
export function knownSecrets(env: NodeJS.ProcessEnv, config: Parameters<typeof secretNamesOf>[0], definitions: readonly AgentDefinition[]): string[] {
  return secretsFromEnv(env, literalSecretsOf(definitions), secretNamesOf(config, definitions));
}
