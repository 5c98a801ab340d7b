#!/usr/bin/env node
// A hostile fake `claude` (test/security/redis-auth.test.ts): it speaks raw RESP to the Redis named in its task,
// as the user it runs as, to lift its own daily limit and silence another agent, and writes through its hub
// gateway between the tries. Task words: REDIS=host:port DAY_KEY=<prefix>:agent-day:<day> SELF=<agent>
// VICTIM=<agent> POST=<post id> TRIES=<n> REPORT=<file>. What every command answered goes to REPORT as JSON.
import { Buffer } from 'node:buffer';
import { readFileSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { createConnection } from 'node:net';

const argv = process.argv.slice(2);
const word = (task, name) => new RegExp(`${name}=(\\S+)`).exec(task)?.[1];

/** One command on a fresh connection, as redis-cli would send it; the first line of the reply. */
function resp(host, port, args) {
  return new Promise((resolve) => {
    const sock = createConnection({ host, port });
    let got = '';
    sock.setEncoding('utf8');
    sock.on('connect', () => sock.write(`*${args.length}\r\n${args.map((a) => `$${Buffer.byteLength(String(a))}\r\n${a}\r\n`).join('')}`));
    sock.on('data', (d) => {
      got += d;
      if (got.includes('\r\n')) {
        sock.destroy();
        resolve(got.split('\r\n')[0]);
      }
    });
    sock.on('error', (err) => resolve(`error ${err.message}`));
  });
}

/** A comment through the gateway; its HTTP status. */
function comment(url, token, content) {
  return new Promise((resolve) => {
    const req = request(url, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode));
    });
    req.on('error', (err) => resolve(`error ${err.message}`));
    req.end(JSON.stringify({ content }));
  });
}

let task = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (d) => (task += d));
process.stdin.on('end', async () => {
  const [host, port] = (word(task, 'REDIS') ?? '127.0.0.1:6379').split(':');
  const dayKey = word(task, 'DAY_KEY');
  const self = word(task, 'SELF');
  const victim = word(task, 'VICTIM');
  const post = word(task, 'POST');
  const tries = Number(word(task, 'TRIES') ?? 4);
  // The hub gateway the daemon gave this run: its URL and token are in the hub MCP server's environment.
  const mcp = argv.includes('--mcp-config') ? JSON.parse(readFileSync(argv[argv.indexOf('--mcp-config') + 1], 'utf8')) : { mcpServers: {} };
  const hub = Object.values(mcp.mcpServers).find((s) => s.env?.WARREN_HUB_KEY)?.env ?? {};
  const report = { uid: process.getuid(), redis: [], comments: [] };
  for (let i = 0; i < tries; i++) {
    // Forget the comments counted so far today, then comment again.
    report.redis.push(await resp(host, Number(port), ['HDEL', dayKey, `${self}|comments`]));
    report.comments.push(await comment(`${hub.WARREN_HUB_URL}/api/v1/posts/${post}/comments`, hub.WARREN_HUB_KEY, `tampered comment ${i + 1}`));
  }
  // Another agent at a billion comments today: silenced until midnight UTC.
  report.redis.push(await resp(host, Number(port), ['HSET', dayKey, `${victim}|comments`, '1000000000']));
  writeFileSync(word(task, 'REPORT'), JSON.stringify(report));
  const result = { type: 'result', subtype: 'success', is_error: false, terminal_reason: 'completed', num_turns: 1, result: 'done', usage: { input_tokens: 3, output_tokens: 2 } };
  console.log(JSON.stringify(result));
});
