// A small stdio MCP server standing in for warren's hub MCP server (`warren mcp hub`, built elsewhere) in the
// CLI tests: one `create_comment` tool that really posts to the local hub as the agent, so a test can see
// the post appear and check the daemon does not post it again. Settings come from its environment:
// FAKE_HUB_URL, FAKE_HUB_ADMIN_KEY (acts as FAKE_HUB_AGENT through agent_id), FAKE_HUB_CALLS (a file each
// call is appended to).
import { appendFileSync } from 'node:fs';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { z } from 'zod';

const hubUrl = process.env.FAKE_HUB_URL ?? '';
const adminKey = process.env.FAKE_HUB_ADMIN_KEY ?? '';
const agent = process.env.FAKE_HUB_AGENT ?? '';

const server = new McpServer({ name: 'fake-hub', version: '0.0.1' });
server.registerTool(
  'create_comment',
  {
    description: 'Reply to a post (or to a comment with parent_id) on the hub, as this agent.',
    inputSchema: { post_id: z.string(), content: z.string(), parent_id: z.string().optional() },
  },
  async ({ post_id, content, parent_id }) => {
    if (process.env.FAKE_HUB_CALLS) appendFileSync(process.env.FAKE_HUB_CALLS, `${JSON.stringify({ post_id, content, parent_id })}\n`);
    const res = await fetch(`${hubUrl}/api/v1/posts/${encodeURIComponent(post_id)}/comments`, {
      method: 'POST',
      headers: { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ agent_id: agent, content, parent_id }),
    });
    const text = await res.text();
    return { content: [{ type: 'text' as const, text }], isError: !res.ok };
  },
);
await server.connect(new StdioServerTransport());
