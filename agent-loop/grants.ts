// Grants the loop's tools need (the rule that checks them is store/grants.ts).

/** The grant an MCP server needs before it is started: `mcp:<server>` (or `mcp:*`). */
export function mcpServerGrant(server: string): string {
  return `mcp:${server}`;
}
