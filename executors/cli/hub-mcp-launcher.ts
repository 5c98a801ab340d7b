// How the daemon starts warren's own hub MCP server for a CLI agent: `warren mcp hub --agent <name> --grants …
// --activation <id>` on the pinned Node (the activation id roots its writes' idempotency keys, so a retried
// activation does not post twice), with the hub's URL and the key it acts with in its environment (never in
// argv, which any local user can read with ps). The server enforces the agent's hub grants itself, and so does the
// gateway its key is for.
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { MemoryAudience } from '../../memory/audience.ts';
import type { AgentDefinition } from '../../store/definition.ts';
import type { HubMcpLauncher } from './mcp.ts';

const ROOT = resolve(import.meta.dirname, '..', '..');

export interface WarrenHubMcpOptions {
  /**
   * Issues the credentials the server acts with: the hub URL it talks to and a key for the agent. The daemon
   * hands out a scoped gateway token (services/hub-gateway.ts), never the admin key.
   */
  credentials: (agent: AgentDefinition, audience: MemoryAudience, activationId: string) => {
    hubUrl: string;
    key: string;
    grants?: readonly string[];
    release?: () => void;
    /** The templates the agent may propose from, when the key's gateway files its proposals (capabilities.spawning). */
    spawning?: readonly string[];
  };
  /** The Node that runs warren (process.execPath). */
  node?: string;
}

export function warrenHubMcpLauncher(opts: WarrenHubMcpOptions): HubMcpLauncher {
  return (agent, activationId, audience) => {
    const { hubUrl, key, grants, release, spawning } = opts.credentials(agent, audience, activationId);
    return {
      command: opts.node ?? process.execPath,
      args: [join(ROOT, 'bin', 'warren.js'), 'mcp', 'hub', '--agent', agent.name, '--grants', (grants ?? agent.config.capabilities.grants.filter((g) => g.startsWith('hub:'))).join(','), '--activation', activationId, ...(offersLearnings(agent) ? ['--learnings'] : []), ...(spawning?.length ? ['--spawning', spawning.join(',')] : [])],
      env: { WARREN_HUB_URL: hubUrl, WARREN_HUB_KEY: key },
      release,
    };
  };
}

/** observability.post_learnings: the server offers post_learning (not to an agent that may not start posts). */
function offersLearnings(agent: AgentDefinition): boolean {
  return agent.config.observability.post_learnings && agent.config.behavior.can_create_posts;
}

/**
 * Whether this build has the `warren mcp hub` command (daemon/commands/mcp-hub.ts, built on another branch).
 * Without it CLI agents get no hub server and the daemon posts their answers, instead of every CLI starting
 * a server that fails at once.
 */
export function warrenHubMcpAvailable(): boolean {
  return existsSync(join(ROOT, 'daemon', 'commands', 'mcp-hub.ts'));
}
