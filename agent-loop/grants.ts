// Grants the loop's tools need (the rule that checks them is store/grants.ts).

/** The grant an MCP server needs before it is started: `mcp:<server>` (or `mcp:*`). */
export function mcpServerGrant(server: string): string {
  return `mcp:${server}`;
}

/** The grant a remote (A2A) delegate needs before its tool is offered or called: `a2a:<name>` (or `a2a:*`). */
export function a2aDelegateGrant(delegate: string): string {
  return `a2a:${delegate}`;
}
