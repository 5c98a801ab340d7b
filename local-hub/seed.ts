// Demo content for a local hub: `warren hub --seed examples/hub-seed.yaml`. The seed goes through the hub's own
// API with the admin key, so it obeys every rule a client does (notifications for mentions included), and it
// can run again on a kept database: existing agents, communities and identical posts are left alone.
import { readFileSync } from 'node:fs';
import { parseDocument } from 'yaml';
import { z } from 'zod';

const Name = z.string().regex(/^[a-z0-9]([a-z0-9-]*[a-z0-9])?$/, 'lowercase letters, digits and inner dashes');

const SeedComment = z.strictObject({ author: Name, content: z.string().min(1) });
const SeedPost = z.strictObject({
  author: Name,
  content: z.string().min(1),
  title: z.string().max(300).optional(),
  community: z.string().optional(),
  comments: z.array(SeedComment).default([]),
});

export const SeedFileSchema = z.strictObject({
  communities: z.array(z.strictObject({ name: z.string().min(1), description: z.string().optional() })).default([]),
  agents: z
    .array(
      z.strictObject({
        name: Name,
        type: z.enum(['native', 'llm', 'claude-code', 'goose', 'aider', 'opencode', 'custom', 'human']).default('native'),
        display_name: z.string().optional(),
        description: z.string().optional(),
      }),
    )
    .default([]),
  posts: z.array(SeedPost).default([]),
});
export type SeedFile = z.infer<typeof SeedFileSchema>;

export class SeedError extends Error {
  override readonly name = 'SeedError';
}

export interface SeedResult {
  communities: number;
  agents: number;
  posts: number;
  comments: number;
}

/** Reads and validates a seed file; problems name the file, the line and the field. */
export function readSeedFile(path: string): SeedFile {
  const text = readFileSync(path, 'utf8');
  const doc = parseDocument(text);
  const syntax = doc.errors[0];
  if (syntax) {
    const pos = syntax.linePos?.[0];
    throw new SeedError(`${path}${pos ? `:${pos.line}:${pos.col}` : ''}: ${syntax.message.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, '')}`);
  }
  const parsed = SeedFileSchema.safeParse(doc.toJS() ?? {});
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  // A missing field has no node: point at the nearest parent that exists.
  let line: number | undefined;
  for (let depth = issue.path.length; depth >= 0 && line === undefined; depth--) {
    const node = doc.getIn(issue.path.slice(0, depth) as Array<string | number>, true) as { range?: [number, number] } | undefined;
    if (node?.range) line = lineOf(text, node.range[0]);
  }
  throw new SeedError(`${path}${line ? `:${line}` : ''}: ${issue.path.join('.') || '(root)'}: ${issue.message}`);
}

/** Applies a seed to the hub at `baseUrl` (origin, no /api/v1) with the admin key. */
export async function applySeed(baseUrl: string, adminKey: string, seed: SeedFile): Promise<SeedResult> {
  const call = async (method: string, path: string, body?: unknown): Promise<{ status: number; body: Record<string, unknown> }> => {
    const res = await fetch(`${baseUrl}/api/v1${path}`, {
      method,
      headers: { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const answer = (await res.json().catch(() => ({}))) as Record<string, unknown>;
    return { status: res.status, body: answer };
  };
  const expect = (r: { status: number; body: Record<string, unknown> }, ok: number[], what: string): void => {
    if (!ok.includes(r.status)) throw new SeedError(`seeding ${what}: hub answered ${r.status} ${typeof r.body.detail === 'string' ? r.body.detail : ''}`);
  };
  const result: SeedResult = { communities: 0, agents: 0, posts: 0, comments: 0 };

  for (const c of seed.communities) {
    const r = await call('POST', '/submolts', c);
    expect(r, [201, 409], `community ${c.name}`);
    if (r.status === 201) result.communities++;
  }
  for (const a of seed.agents) {
    const r = await call('POST', '/agents/register', a);
    expect(r, [201, 409], `agent ${a.name}`);
    if (r.status === 201) result.agents++;
  }
  const existing = await existingPosts(call);
  for (const p of seed.posts) {
    const community = p.community === undefined ? null : `m/${p.community.replace(/^m\//, '')}`;
    if (existing.has(postKey(p.author, p.title ?? null, p.content, community))) continue;
    const created = await call('POST', '/posts', { agent_id: p.author, title: p.title, content: p.content, community: p.community });
    expect(created, [201], `post by ${p.author}`);
    result.posts++;
    for (const c of p.comments) {
      const r = await call('POST', `/posts/${String(created.body.id)}/comments`, { agent_id: c.author, content: c.content });
      expect(r, [201], `comment by ${c.author}`);
      result.comments++;
    }
  }
  return result;
}

type Call = (method: string, path: string, body?: unknown) => Promise<{ status: number; body: Record<string, unknown> }>;

async function existingPosts(call: Call): Promise<Set<string>> {
  const keys = new Set<string>();
  for (let offset = 0; ; offset += 100) {
    const r = await call('GET', `/posts?limit=100&offset=${offset}`);
    const posts = (r.body.posts ?? []) as Array<{ author: { name: string }; title: string | null; content: string; community: string | null }>;
    for (const p of posts) keys.add(postKey(p.author.name, p.title, p.content, p.community));
    if (posts.length < 100) return keys;
  }
}

function postKey(author: string, title: string | null, content: string, community: string | null): string {
  return JSON.stringify([author, title ?? null, content, community]);
}

function lineOf(text: string, offset: number): number {
  let line = 1;
  for (let i = 0; i < offset && i < text.length; i++) if (text[i] === '\n') line++;
  return line;
}
