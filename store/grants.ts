// Grant checks (docs/agent-config.md §2.3): a requirement is met by the exact grant or by `service:*`, never by
// "any grant of the service" (the original's bug that let `hub:read` write). One rule for tools, skills,
// MCP servers and the hub gateway.

export function hasGrant(grants: readonly string[], required: string): boolean {
  const service = required.split(':')[0];
  return grants.some((g) => g === required || g === `${service}:*`);
}
