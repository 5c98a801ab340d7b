// MCP servers as tools (docs/agent-loop.md R14, R10, R5): each granted server is started (stdio) or connected
// (streamable HTTP) through the SDK's Client, and its tools are offered as `<server>__<tool>`. A server without
// its grant (`mcp:<server>`) is never started. Credentials reach a stdio server only through the env its
// config declares, resolved by name from the daemon's secrets (`${NAME}`); the daemon's environment is never
// passed wholesale. Aborting a call sends the server `notifications/cancelled` (the SDK does, given the signal),
// for that call only: never for `initialize` (the specification forbids it; an abort while connecting closes the
// transport instead) nor for a request already answered (each request gets a signal of its own, let go once it
// is answered, because the SDK never removes its abort listeners). Closing ends what was opened: a stdio server's whole process group (mcp-stdio-transport.ts), an HTTP session
// with its DELETE, so neither outlives the run. The SDK is loaded with the first server connected (loadMcpClient):
// its client costs megabytes of heap for the daemon's whole life, and most agents name no MCP server.
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { EventLog } from './events.ts';
import { hasGrant } from '../store/grants.ts';
import { mcpServerGrant } from './grants.ts';
import type { ProcessGroupStdioTransport } from './mcp-stdio-transport.ts';
import type { Tool, ToolOutcome } from './tools.ts';
import { currentTraceparent } from './tracing.ts';

export type McpServerConfig =
  | string
  | { name: string; command: string; args: string[]; env: Record<string, string>; read_only_tools?: readonly string[] }
  | { name: string; url: string; headers: Record<string, string>; read_only_tools?: readonly string[] };

export interface McpConnectOptions {
  grants: readonly string[];
  /** Looks a secret up by its variable name: the only source of credentials. */
  secret: (name: string) => string | undefined;
  events?: EventLog;
  /** Per-call timeout: the executor passes executors.llm.tool_timeout (default 60 s); the call's signal still cancels sooner. */
  callTimeoutMs?: number;
  connectTimeoutMs?: number;
  /** The run's signal: an abort stops connecting (servers not yet reached are not started). */
  signal?: AbortSignal;
  /** Between SIGTERM and SIGKILL to a stdio server's process group on close (default 2 s). */
  killGraceMs?: number;
}

/** How long close waits for an HTTP server to acknowledge the end of its session. */
const SESSION_END_WAIT_MS = 2000;

export interface McpToolSet {
  tools: Tool[];
  /** Servers not started, and why. */
  skipped: Array<{ server: string; reason: string }>;
  close(): Promise<void>;
}

/** Tool names the providers accept: letters, digits, _ and -, at most 64. */
export function mcpToolName(server: string, tool: string): string {
  return `${server}__${tool}`.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 64);
}

/** `${NAME}` values are looked up as secrets; anything else is a literal. Undefined: a named secret is missing. */
export function resolveDeclared(values: Record<string, string>, secret: (name: string) => string | undefined): { resolved: Record<string, string> } | { missing: string } {
  const resolved: Record<string, string> = {};
  for (const [k, v] of Object.entries(values)) {
    const ref = /^\$\{([A-Z][A-Z0-9_]*)\}$/.exec(v)?.[1];
    if (ref === undefined) {
      resolved[k] = v;
      continue;
    }
    const s = secret(ref);
    if (s === undefined) return { missing: ref };
    resolved[k] = s;
  }
  return { resolved };
}

export async function connectMcpServers(servers: readonly McpServerConfig[], opts: McpConnectOptions): Promise<McpToolSet> {
  const open: Connection[] = [];
  const tools: Tool[] = [];
  const skipped: McpToolSet['skipped'] = [];
  const skip = (server: string, reason: string): void => {
    skipped.push({ server, reason });
    opts.events?.emit({ type: 'error', message: `MCP server ${server} not started: ${reason}` });
  };
  for (const s of servers) {
    if (opts.signal?.aborted) break;
    // `hub` names warren's own hub server, whose tools the loop already has built in (gated by hub:read/write).
    if (s === 'hub') continue;
    if (typeof s === 'string') {
      skip(s, 'built-in MCP servers by name are not available in this build; declare {name, command} or {name, url}');
      continue;
    }
    if (!hasGrant(opts.grants, mcpServerGrant(s.name))) {
      skip(s.name, `missing grant ${mcpServerGrant(s.name)}`);
      continue;
    }
    const declared = resolveDeclared('command' in s ? s.env : s.headers, opts.secret);
    if ('missing' in declared) {
      skip(s.name, `its secret ${declared.missing} is not set`);
      continue;
    }
    const sdk = await loadMcpClient();
    // Loading it the first time took a moment: a run that ended meanwhile starts no server.
    if (opts.signal?.aborted) break;
    const client = new sdk.Client({ name: 'warren', version: '0.1.0' });
    const connection: Connection =
      'command' in s
        ? { kind: 'stdio', client, transport: new sdk.ProcessGroupStdioTransport({ command: s.command, args: s.args, env: declared.resolved, killGraceMs: opts.killGraceMs }) }
        : { kind: 'http', client, transport: new sdk.StreamableHTTPClientTransport(new URL(s.url), { requestInit: { headers: declared.resolved }, fetch: tracedFetch }) };
    // An abort while connecting ends the server (the pending initialize then fails at once) instead of cancelling it.
    const abandon = (): void => void connection.transport.close();
    opts.signal?.addEventListener('abort', abandon, { once: true });
    try {
      const timeout = opts.connectTimeoutMs ?? 20_000;
      await client.connect(connection.transport, { timeout });
      const listed = await whileInFlight(opts.signal, (signal) => client.listTools(undefined, { timeout, signal }));
      open.push(connection);
      // A stdio server whose process ends before the run closes it died under the run (status posts count it).
      const name = s.name;
      client.onclose = () => {
        if (!connection.closing) opts.events?.emit({ type: 'mcp_server', server: name, status: 'died', reason: 'the server process exited while the run was using it' });
      };
      const readOnly = new Set(s.read_only_tools ?? []);
      for (const t of listed.tools) tools.push(wrapTool(client, s.name, t, opts, readOnly.has(t.name)));
    } catch (err) {
      await closeConnection(connection);
      const reason = err instanceof Error ? err.message : String(err);
      skip(s.name, `could not connect: ${reason}`);
      // Unless the run itself was ending: a server the abort cut off did not fail.
      if (!opts.signal?.aborted) opts.events?.emit({ type: 'mcp_server', server: s.name, status: 'not_started', reason });
    } finally {
      opts.signal?.removeEventListener('abort', abandon);
    }
  }
  return {
    tools,
    skipped,
    close: async () => {
      await Promise.all(open.map(closeConnection));
    },
  };
}

type Connection = {
  client: Client;
  /** Set when warren closes it: the end that follows is no death. */
  closing?: boolean;
} & ({ kind: 'stdio'; transport: ProcessGroupStdioTransport } | { kind: 'http'; transport: StreamableHTTPClientTransport });

/** The SDK's client and the two transports; the module system keeps them once loaded. */
async function loadMcpClient(): Promise<{ Client: typeof Client; StreamableHTTPClientTransport: typeof StreamableHTTPClientTransport; ProcessGroupStdioTransport: typeof ProcessGroupStdioTransport }> {
  const [{ Client }, { StreamableHTTPClientTransport }, { ProcessGroupStdioTransport }] = await Promise.all([
    import('@modelcontextprotocol/sdk/client/index.js'),
    import('@modelcontextprotocol/sdk/client/streamableHttp.js'),
    import('./mcp-stdio-transport.ts'),
  ]);
  return { Client, StreamableHTTPClientTransport, ProcessGroupStdioTransport };
}

/** Never throws and is bounded: an HTTP session is ended (its DELETE), then the transport is closed. */
async function closeConnection(c: Connection): Promise<void> {
  c.closing = true;
  if (c.kind === 'http') {
    let timer: NodeJS.Timeout | undefined;
    const waited = new Promise<void>((resolve) => (timer = setTimeout(resolve, SESSION_END_WAIT_MS)));
    // A server that does not answer is not waited for: closing the transport below aborts the request.
    await Promise.race([c.transport.terminateSession().catch(() => undefined), waited]);
    clearTimeout(timer);
  }
  // The transport, not client.close(): once a server's leader died the client lets go of its transport, and
  // only the transport can still end the rest of the server's process group.
  await c.transport.close().catch(() => undefined);
}

interface ListedTool {
  name: string;
  description?: string;
  inputSchema: { type: 'object'; properties?: Record<string, unknown>; required?: string[] };
  annotations?: { readOnlyHint?: boolean };
}

/** `declaredReadOnly`: the agent's config lists the tool in the server's `read_only_tools`. */
function wrapTool(client: Client, server: string, t: ListedTool, opts: McpConnectOptions, declaredReadOnly: boolean): Tool {
  const callTimeoutMs = opts.callTimeoutMs ?? 60_000;
  return {
    definition: { name: mcpToolName(server, t.name), description: t.description ?? `${t.name} (MCP server ${server})`, parameters: { ...t.inputSchema } },
    // Unknown effects count as mutating (R4): only an explicit readOnlyHint or the config makes a tool parallel-safe.
    readOnly: t.annotations?.readOnlyHint === true || declaredReadOnly,
    grant: mcpServerGrant(server),
    timeoutMs: callTimeoutMs,
    execute: async (args, ctx) => {
      // The SDK's own request timeout (60 s unless told) would cut a longer configured tool_timeout short.
      const res = await whileInFlight(ctx.signal, (signal) => client.callTool({ name: t.name, arguments: args }, undefined, { signal, timeout: callTimeoutMs }));
      return mapCallResult(res);
    },
  };
}

/**
 * Runs one request with a signal of its own that follows `outer` only until the request settles: the SDK adds an
 * abort listener per request and never removes it, so the run's signal given directly would, when the run ends,
 * send `notifications/cancelled` for every request it ever answered.
 */
export async function whileInFlight<T>(outer: AbortSignal | undefined, request: (signal: AbortSignal | undefined) => Promise<T>): Promise<T> {
  if (!outer) return request(undefined);
  const own = new AbortController();
  const follow = (): void => own.abort(outer.reason);
  if (outer.aborted) follow();
  else outer.addEventListener('abort', follow, { once: true });
  try {
    return await request(own.signal);
  } finally {
    outer.removeEventListener('abort', follow);
  }
}

/** MCP `content[]` and `isError`, faithfully: every block in order, errors as errors (the original saw `{}`). */
export function mapCallResult(res: { content?: unknown; isError?: unknown; structuredContent?: unknown; toolResult?: unknown }): ToolOutcome {
  const blocks = Array.isArray(res.content) ? (res.content as Array<Record<string, unknown>>) : [];
  const parts = blocks.map((b) => {
    if (b.type === 'text') return String(b.text);
    if (b.type === 'image' || b.type === 'audio') return `[${String(b.type)}: ${String(b.mimeType)}]`;
    if (b.type === 'resource' && b.resource && typeof b.resource === 'object') {
      const r = b.resource as Record<string, unknown>;
      return typeof r.text === 'string' ? r.text : `[resource: ${String(r.uri)}]`;
    }
    if (b.type === 'resource_link') return `[resource: ${String(b.uri)}]`;
    return JSON.stringify(b);
  });
  if (!parts.length && res.structuredContent !== undefined) parts.push(JSON.stringify(res.structuredContent));
  if (!parts.length && res.toolResult !== undefined) parts.push(JSON.stringify(res.toolResult));
  return { status: res.isError === true ? 'error' : 'ok', content: parts.join('\n') };
}

/** Requests made during a traced tool call carry its traceparent, so the MCP server's spans join the trace. */
const tracedFetch = (url: string | URL, init?: RequestInit): Promise<Response> => {
  const traceparent = currentTraceparent();
  if (!traceparent) return fetch(url, init);
  const headers = new Headers(init?.headers);
  headers.set('traceparent', traceparent);
  return fetch(url, { ...init, headers });
};
