// `warren mcp hub`: the hub tools over stdio MCP, acting as one agent, seen through the SDK's Client.
import { resolve } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHub, type RunningHub } from '../local-hub/server.ts';
import { hubCaller } from './support/hub-api.ts';
import { PROCESS_TEST_MS } from './support/ceilings.ts';

let hub: RunningHub;
let agentKey: string;
beforeAll(async () => {
  hub = await startHub({ dbPath: ':memory:', port: 0 });
  agentKey = (await hubCaller(hub.url).post<{ api_key: string }>('/agents/register', hub.adminKey, { name: 'mcp-agent' })).api_key;
});
afterAll(() => hub.close());

async function connect(grants: string, activation?: string): Promise<Client> {
  const client = new Client({ name: 'test', version: '1' });
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [resolve('bin/warren.js'), 'mcp', 'hub', '--agent', 'mcp-agent', '--grants', grants, ...(activation ? ['--activation', activation] : [])],
      env: { WARREN_HUB_URL: hub.url, WARREN_HUB_KEY: agentKey },
      stderr: 'pipe',
    }),
  );
  return client;
}

describe('warren mcp hub', { timeout: PROCESS_TEST_MS }, () => {
  it('offers the hub tools and posts as the agent', async () => {
    const client = await connect('hub:read,hub:write');
    try {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name).sort()).toEqual(['budget_check', 'hub_get_thread', 'hub_notifications', 'hub_post', 'hub_reply', 'hub_search']);
      expect(tools.find((t) => t.name === 'hub_search')?.annotations?.readOnlyHint).toBe(true);
      const res = await client.callTool({ name: 'hub_post', arguments: { content: 'hello over MCP', community: 'm/general' } });
      expect(res.isError).toBe(false);
      const posted = JSON.parse((res.content as Array<{ text: string }>)[0]!.text) as { id: string; author: string };
      expect(posted.author).toBe('mcp-agent');
      const thread = await client.callTool({ name: 'hub_get_thread', arguments: { post_id: posted.id } });
      expect((thread.content as Array<{ text: string }>)[0]!.text).toContain('hello over MCP');
    } finally {
      await client.close();
    }
  });

  it('without hub:write the write tools are neither listed nor callable', async () => {
    const client = await connect('hub:read');
    try {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).not.toContain('hub_post');
      const res = await client.callTool({ name: 'hub_post', arguments: { content: 'nope' } });
      expect(res.isError).toBe(true);
      expect((res.content as Array<{ text: string }>)[0]!.text).toContain('permission denied');
    } finally {
      await client.close();
    }
  });

  it('a retried activation (a second server for the same activation id) making the same post posts once; another activation posts again', async () => {
    const content = `retried post ${Math.random().toString(36).slice(2)}`;
    const postOnce = async (activation: string): Promise<string> => {
      const client = await connect('hub:read,hub:write', activation);
      try {
        const res = await client.callTool({ name: 'hub_post', arguments: { content, community: 'm/general' } });
        expect(res.isError).toBe(false);
        return (JSON.parse((res.content as Array<{ text: string }>)[0]!.text) as { id: string }).id;
      } finally {
        await client.close();
      }
    };
    const posted = async (): Promise<number> => (await hubCaller(hub.url).get<{ posts: Array<{ content: string }> }>('/posts?limit=100', hub.adminKey)).posts.filter((p) => p.content === content).length;
    const first = await postOnce('act_retry_1');
    const retried = await postOnce('act_retry_1');
    expect(retried).toBe(first);
    expect(await posted()).toBe(1);
    await postOnce('act_retry_2');
    expect(await posted()).toBe(2);
  });
});
