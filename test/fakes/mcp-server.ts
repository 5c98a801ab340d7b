// A test MCP server (docs/agent-loop.md R15) over stdio or streamable HTTP, with a read-only tool, a mutating tool,
// a slow tool that notices cancellation (or, asked to, ignores it), a failing tool, and `env` (what its process
// environment holds). Run `node test/fakes/mcp-server.ts` for stdio (FAKE_MCP_PID_FILE: where it writes its pid,
// so a test can see it outlive its wrapper; FAKE_MCP_IGNORE_SIGTERM: it does; FAKE_MCP_MESSAGE_LOG: where it logs
// every message it receives); startFakeMcpHttp() for HTTP on 127.0.0.1. It logs to stderr only.
import { randomUUID } from 'node:crypto';
import { appendFileSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { readBody } from './read-body.ts';

export interface FakeMcpState {
  calls: Array<{ name: string; arguments: Record<string, unknown> }>;
  /** Names of tool calls whose request was cancelled by the client. */
  cancelled: string[];
  notes: string[];
  /** The `traceparent` header of each HTTP request that had one (tracing tests). */
  traceparents: string[];
  /** HTTP sessions started, and those the client ended with a DELETE, by session id. */
  sessions: string[];
  deleted: string[];
}

export function newState(): FakeMcpState {
  return { calls: [], cancelled: [], notes: [], traceparents: [], sessions: [], deleted: [] };
}

const obj = (properties: Record<string, unknown>, required: string[] = []): { type: 'object'; properties: Record<string, unknown>; required: string[] } => ({ type: 'object', properties, required });

export function createFakeMcpServer(state: FakeMcpState): Server {
  const server = new Server({ name: 'fake-mcp', version: '1.0.0' }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: [
      { name: 'lookup', description: 'Look a word up (read-only).', inputSchema: obj({ q: { type: 'string' } }, ['q']), annotations: { readOnlyHint: true } },
      { name: 'write_note', description: 'Store a note (mutating).', inputSchema: obj({ text: { type: 'string' } }, ['text']), annotations: { readOnlyHint: false, destructiveHint: true } },
      { name: 'slow', description: 'Sleeps ms milliseconds (default 10 s); ignore_cancel: sleeps on when cancelled.', inputSchema: obj({ ms: { type: 'integer' }, ignore_cancel: { type: 'boolean' } }), annotations: { readOnlyHint: true } },
      { name: 'fail', description: 'Always fails.', inputSchema: obj({}) },
      { name: 'env', description: 'Its process environment.', inputSchema: obj({}), annotations: { readOnlyHint: true } },
      { name: 'big', description: 'Returns n characters.', inputSchema: obj({ n: { type: 'integer' } }), annotations: { readOnlyHint: true } },
    ],
  }));
  server.setRequestHandler(CallToolRequestSchema, async (req, extra): Promise<CallToolResult> => {
    const args = req.params.arguments ?? {};
    state.calls.push({ name: req.params.name, arguments: args });
    const text = (t: string): CallToolResult => ({ content: [{ type: 'text', text: t }] });
    switch (req.params.name) {
      case 'lookup':
        return { content: [{ type: 'text', text: `found ${String(args.q)}` }, { type: 'text', text: 'second block' }] };
      case 'write_note':
        state.notes.push(String(args.text));
        return text(`stored note ${state.notes.length}`);
      case 'slow': {
        const ms = typeof args.ms === 'number' ? args.ms : 10_000;
        await new Promise<void>((resolve) => {
          const t = setTimeout(resolve, ms);
          // A server busy with work it cannot interrupt: only killing its process ends it.
          if (args.ignore_cancel === true) return;
          extra.signal.addEventListener('abort', () => {
            clearTimeout(t);
            state.cancelled.push('slow');
            process.stderr.write('fake-mcp: slow cancelled\n');
            // Over stdio the test cannot see `state`: a declared env names a file to record it in.
            if (process.env.FAKE_MCP_CANCEL_LOG) appendFileSync(process.env.FAKE_MCP_CANCEL_LOG, 'slow\n');
            resolve();
          });
        });
        return text(extra.signal.aborted ? 'cancelled' : `slept ${ms}`);
      }
      case 'fail':
        return { isError: true, content: [{ type: 'text', text: 'it failed on purpose' }] };
      case 'env':
        return text(JSON.stringify(process.env));
      case 'big':
        return text('b'.repeat(typeof args.n === 'number' ? args.n : 1000));
      default:
        return { isError: true, content: [{ type: 'text', text: `unknown tool ${req.params.name}` }] };
    }
  });
  return server;
}

export interface FakeMcpHttp {
  url: string;
  state: FakeMcpState;
  close(): Promise<void>;
}

/**
 * Streamable HTTP with sessions, so a cancellation notification reaches the request it cancels.
 * `hangOnDelete`: a session's DELETE is recorded and never answered (a server that is stuck or gone).
 */
export async function startFakeMcpHttp(opts: { hangOnDelete?: boolean } = {}): Promise<FakeMcpHttp> {
  const state = newState();
  const transports = new Map<string, StreamableHTTPServerTransport>();
  const http = createHttpServer((req, res) => {
    void (async () => {
      const raw = await readBody(req);
      const body: unknown = raw ? JSON.parse(raw) : undefined;
      const sid = req.headers['mcp-session-id'];
      const tp = req.headers.traceparent;
      if (typeof tp === 'string') state.traceparents.push(tp);
      if (req.method === 'DELETE' && typeof sid === 'string') {
        state.deleted.push(sid);
        if (opts.hangOnDelete) return;
      }
      let transport = typeof sid === 'string' ? transports.get(sid) : undefined;
      if (!transport) {
        const t: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          onsessioninitialized: (id) => {
            transports.set(id, t);
            state.sessions.push(id);
          },
        });
        await createFakeMcpServer(state).connect(t);
        transport = t;
      }
      await transport.handleRequest(req, res, body);
    })().catch((err: unknown) => {
      process.stderr.write(`fake-mcp http: ${String(err)}\n`);
      if (!res.headersSent) res.writeHead(500).end();
    });
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    state,
    close: async () => {
      for (const t of transports.values()) await t.close().catch(() => undefined);
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

if (import.meta.main) {
  if (process.env.FAKE_MCP_PID_FILE) writeFileSync(process.env.FAKE_MCP_PID_FILE, String(process.pid));
  // A server that will not stop politely: only SIGKILL ends it.
  if (process.env.FAKE_MCP_IGNORE_SIGTERM) process.on('SIGTERM', () => undefined);
  const state = newState();
  const transport = new StdioServerTransport();
  await createFakeMcpServer(state).connect(transport);
  // FAKE_MCP_MESSAGE_LOG: every message the client sent, one JSON line each (what a test cannot see over stdio).
  const messageLog = process.env.FAKE_MCP_MESSAGE_LOG;
  const handle = transport.onmessage;
  if (messageLog && handle) {
    transport.onmessage = (message: JSONRPCMessage) => {
      appendFileSync(messageLog, `${JSON.stringify(message)}\n`);
      handle(message);
    };
  }
}
