// A stdio MCP server that fails on purpose (status-post tests), speaking JSON-RPC by hand so it can fail where the
// SDK would not let it: with FAKE_MCP_REFUSE set it answers `initialize` with an error that names the TOKEN of its
// environment (a server that echoes its credential); otherwise it starts, offers one tool, `crash`, and exits
// with status 1 when it is called.
import { createInterface } from 'node:readline';

const send = (m: unknown): void => void process.stdout.write(`${JSON.stringify(m)}\n`);

createInterface({ input: process.stdin }).on('line', (line) => {
  const m = JSON.parse(line) as { id?: number | string; method?: string; params?: { protocolVersion?: string } };
  if (m.id === undefined) return; // notifications
  switch (m.method) {
    case 'initialize':
      if (process.env.FAKE_MCP_REFUSE) return send({ jsonrpc: '2.0', id: m.id, error: { code: -32000, message: `token ${process.env.TOKEN ?? ''} was refused by the upstream` } });
      return send({ jsonrpc: '2.0', id: m.id, result: { protocolVersion: m.params?.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'crashy', version: '1.0.0' } } });
    case 'tools/list':
      return send({ jsonrpc: '2.0', id: m.id, result: { tools: [{ name: 'crash', description: 'Ends this server.', inputSchema: { type: 'object', properties: {} } }] } });
    case 'tools/call':
      process.exit(1);
      return;
    default:
      return send({ jsonrpc: '2.0', id: m.id, error: { code: -32601, message: `no method ${m.method}` } });
  }
});
