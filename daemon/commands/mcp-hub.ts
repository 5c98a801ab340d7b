// `warren mcp hub`: the hub tools as a stdio MCP server for CLI executors (docs/agent-loop.md R14), acting as one
// agent. The same tool definitions and grant rule as the in-process loop. stdout carries JSON-RPC only:
// every log line goes to stderr (the original hub server logged to stdout and corrupted its stream).
// With memory grants it also serves memory_save / memory_search, through the daemon's gateway; with --spawning,
// propose_agent (capabilities.spawning), filed by the daemon through the same gateway.
// A write the gateway holds for approval is the call's result in words ("held for approval …"), not an error: the
// write is not lost, the daemon makes it after a person's yes, and the model must not send it again.
import type { Command } from 'commander';
import { canonicalJson } from '../../agent-loop/loop-guard.ts';
import type { HubAdapter } from '../../hub-client/adapter.ts';
import { mcpToolCallKey, standaloneMcpRoot } from '../../policy/idempotency-keys.ts';
import { WARREN_VERSION } from '../version.ts';

export interface McpHubOptions {
  agent: string;
  hubUrl: string;
  /** The agent's own hub key, or the admin key (then it acts as `agent` through agent_id). */
  key: string;
  grants: readonly string[];
  /** The activation served (the CLI executor passes it); without one, this server process is the root of its keys. */
  activationId?: string;
  /** Offer post_learning (the agent's observability.post_learnings). */
  learnings?: boolean;
  /** Offer propose_agent from these templates (capabilities.spawning), filed through the daemon's gateway. */
  spawning?: readonly string[];
}

export function registerMcpCommand(program: Command): void {
  const mcp = program.command('mcp').description('MCP servers warren provides');
  mcp
    .command('hub')
    .description('serve the hub tools over stdio MCP, acting as one agent (env: WARREN_HUB_URL, WARREN_HUB_KEY)')
    .requiredOption('--agent <name>', 'the agent the tools act as')
    .option('--grants <list>', 'comma-separated grants', 'hub:read,hub:write')
    .option('--activation <id>', 'the activation this server serves: the root of its hub writes\' idempotency keys')
    .option('--learnings', 'offer post_learning: posts to m/agent-learnings (the agent\'s observability.post_learnings)')
    .option('--spawning <templates>', 'offer propose_agent from these comma-separated templates (the agent\'s capabilities.spawning); proposals are filed by the daemon\'s gateway')
    .action(async (opts: { agent: string; grants: string; activation?: string; learnings?: boolean; spawning?: string }) => {
      const key = process.env.WARREN_HUB_KEY ?? process.env.WARREN_HUB_ADMIN_KEY;
      if (!key) throw new Error('warren mcp hub needs WARREN_HUB_KEY (the agent key) or WARREN_HUB_ADMIN_KEY');
      const hubUrl = process.env.WARREN_HUB_URL ?? 'http://127.0.0.1:7070';
      await serveHubMcp({ agent: opts.agent, hubUrl, key, grants: opts.grants.split(',').map((g) => g.trim()).filter(Boolean), activationId: opts.activation, learnings: opts.learnings === true, spawning: opts.spawning?.split(',').map((t) => t.trim()).filter(Boolean) });
    });
}

export async function serveHubMcp(opts: McpHubOptions, hubOverride?: HubAdapter): Promise<void> {
  const { Server } = await import('@modelcontextprotocol/sdk/server/index.js');
  const { StdioServerTransport } = await import('@modelcontextprotocol/sdk/server/stdio.js');
  const { CallToolRequestSchema, ListToolsRequestSchema } = await import('@modelcontextprotocol/sdk/types.js');
  const { hubTools } = await import('../../agent-loop/hub-tools.ts');
  const { learningTool } = await import('../../agent-loop/learning-tool.ts');
  const { hasGrant } = await import('../../store/grants.ts');
  const { HubClient } = await import('../../hub-client/client.ts');
  const { memoryToolsOver } = await import('../../memory/memory-tools.ts');
  const { gatewayMemoryBackend } = await import('../../memory/gateway-memory-backend.ts');
  const { HubWriteHeld } = await import('../../hub-client/write-held.ts');
  const { proposalTool } = await import('../../agent-loop/propose-agent.ts');
  const { gatewayProposals } = await import('../../agent-loop/gateway-proposals.ts');

  const hub = hubOverride ?? new HubClient({ baseUrl: opts.hubUrl, apiKey: opts.key });
  // memory_save / memory_search only when granted: their backend is the daemon's gateway (the key is its token).
  const withMemory = opts.grants.some((g) => g.startsWith('memory:'));
  const tools = [...hubTools({ hub, agent: opts.agent }), ...(opts.learnings ? [learningTool({ hub, agent: opts.agent })] : []), ...(withMemory ? memoryToolsOver(gatewayMemoryBackend(opts.hubUrl, opts.key)) : []),
    // propose_agent only with templates named: its backend is the daemon's gateway, which checks and files it.
    ...(opts.spawning?.length ? [proposalTool(opts.spawning, gatewayProposals(opts.hubUrl, opts.key))] : [])];
  const allowed = (grant: string | undefined): boolean => grant === undefined || hasGrant(opts.grants, grant);
  const activationId = opts.activationId ?? standaloneMcpRoot(opts.agent, process.pid, Date.now());

  const server = new Server({ name: 'warren-hub', version: WARREN_VERSION }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: tools
      .filter((t) => allowed(t.grant))
      .map((t) => ({
        name: t.definition.name,
        description: t.definition.description,
        inputSchema: t.definition.parameters as { type: 'object'; properties?: Record<string, unknown> },
        annotations: { readOnlyHint: t.readOnly },
      })),
  }));
  server.setRequestHandler(CallToolRequestSchema, async (req, extra) => {
    const tool = tools.find((t) => t.definition.name === req.params.name);
    const fail = (text: string): { isError: true; content: Array<{ type: 'text'; text: string }> } => ({ isError: true, content: [{ type: 'text', text }] });
    if (!tool) return fail(`unknown tool ${req.params.name}`);
    if (!allowed(tool.grant)) return fail(`permission denied: ${tool.definition.name} needs the grant ${tool.grant ?? '?'}`);
    try {
      const out = await tool.execute(req.params.arguments ?? {}, { signal: extra.signal, callId: String(extra.requestId), idempotencyKey: mcpToolCallKey(activationId, tool.definition.name, canonicalJson(req.params.arguments ?? {})), step: 0 });
      return { isError: out.status !== 'ok', content: [{ type: 'text' as const, text: out.content }] };
    } catch (err) {
      if (err instanceof HubWriteHeld) return { content: [{ type: 'text' as const, text: `${tool.definition.name}: ${err.message}` }] };
      return fail(`${tool.definition.name} failed: ${err instanceof Error ? err.message : String(err)}`);
    }
  });
  await server.connect(new StdioServerTransport());
  process.stderr.write(`warren mcp hub: serving as ${opts.agent} (${opts.grants.join(', ')})\n`);
}
