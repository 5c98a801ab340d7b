// Which tool calls wait for a person's yes (README "Approvals"), from an agent's `approvals.tools` (pure). A
// pattern names a tool as the loop's registry calls it (`hub_post`) or an MCP tool as `mcp:<server>:<tool>`
// (registered as `<server>__<tool>`, agent-loop/mcp-tools.ts); `*` matches any run of characters.
import { mcpToolName } from './mcp-tools.ts';

/** The registry name a pattern stands for, `*` kept. */
function registryPattern(pattern: string): string {
  const mcp = /^mcp:([^:]+):(.+)$/.exec(pattern);
  if (!mcp) return pattern;
  // mcpToolName replaces characters a provider refuses; the wildcard survives it as a placeholder.
  return mcpToolName(mcp[1]!.replaceAll('*', 'STAR0'), mcp[2]!.replaceAll('*', 'STAR0')).replaceAll('STAR0', '*');
}

function globRegExp(pattern: string): RegExp {
  return new RegExp(`^${pattern.split('*').map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`);
}

/** A test of tool names against an agent's patterns; none given: no call waits. */
export function approvalRule(patterns: readonly string[] | undefined): (toolName: string) => boolean {
  const tests = (patterns ?? []).map((p) => globRegExp(registryPattern(p)));
  return (toolName) => tests.some((t) => t.test(toolName));
}
