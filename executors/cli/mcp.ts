// MCP servers handed to a CLI: warren's hub server (acting as the agent) and the agent's own stdio and HTTP
// servers, in one neutral shape that each CLI adapter renders into its own configuration syntax.
import type { MemoryAudience } from '../../memory/audience.ts';
import type { AgentDefinition } from '../../store/definition.ts';
import { effectiveGrants } from '../../memory/memory-grants.ts';

/** How to start one stdio MCP server. */
export interface McpLaunch {
  command: string;
  args: readonly string[];
  env: Readonly<Record<string, string>>;
}

export type McpServerSpec = ({ kind: 'stdio' } & McpLaunch & { name: string }) | { kind: 'http'; name: string; url: string; headers: Readonly<Record<string, string>> };

/**
 * Builds the launch command of warren's hub MCP server for one agent (e.g. `warren mcp hub --agent <name>`).
 * Supplied by the daemon; without one, CLI agents cannot post themselves and the daemon posts their answer.
 */
/** `audience`: whom the activation answers, for the memory tools the server reaches through the gateway. */
export type HubMcpLauncher = (agent: AgentDefinition, activationId: string, audience: MemoryAudience) => McpLaunch & { release?: () => void };

/** The server name the hub MCP server gets in every CLI's configuration; tool names are prefixed with it. */
export const HUB_MCP_NAME = 'hub';

/** Hub tools that put something on the hub; a successful call means the agent already answered. */
export const DEFAULT_POSTING_TOOLS: readonly string[] = ['create_comment', 'create_post', 'reply', 'post', 'hub_post', 'hub_comment', 'hub_reply'];

/**
 * Whether a tool name as a CLI reports it is a hub posting tool. Claude names MCP tools `mcp__<server>__<tool>`,
 * goose `<extension>__<tool>`, opencode `<server>_<tool>`.
 */
export function isHubPostingTool(name: string, postingTools: readonly string[] = DEFAULT_POSTING_TOOLS): boolean {
  for (const prefix of [`mcp__${HUB_MCP_NAME}__`, `${HUB_MCP_NAME}__`, `${HUB_MCP_NAME}_`]) {
    if (name.startsWith(prefix)) return postingTools.includes(name.slice(prefix.length));
  }
  return false;
}

/**
 * The MCP servers for one activation: the hub server (when the agent holds a hub or memory grant and a launcher exists),
 * then the agent's explicit stdio and HTTP entries. Built-in names other than `hub` (github, brave…) need
 * credentials wiring that CLI agents do not have yet; they are returned as `skipped` so the caller can say so.
 */
export function mcpServersFor(def: AgentDefinition, hub: McpLaunch | undefined): { servers: McpServerSpec[]; skipped: string[] } {
  const servers: McpServerSpec[] = [];
  const skipped: string[] = [];
  // Memory grants count too: the server carries memory_save / memory_search (implied by memory.enabled).
  const served = effectiveGrants(def.config).some((g) => g === 'hub:read' || g === 'hub:write' || g === 'hub:*' || g.startsWith('memory:'));
  if (hub && served) servers.push({ kind: 'stdio', name: HUB_MCP_NAME, command: hub.command, args: hub.args, env: hub.env });
  for (const entry of def.config.capabilities.mcp_servers) {
    if (typeof entry === 'string') {
      if (entry !== HUB_MCP_NAME) skipped.push(entry);
    } else if ('command' in entry) {
      if (entry.name !== HUB_MCP_NAME) servers.push({ kind: 'stdio', name: entry.name, command: entry.command, args: entry.args, env: entry.env });
    } else if (entry.name !== HUB_MCP_NAME) {
      servers.push({ kind: 'http', name: entry.name, url: entry.url, headers: entry.headers });
    }
  }
  return { servers, skipped };
}
