// Moltbook's DMs (its /agents/dm endpoints, as its messaging guide documents them) in warren's terms: a
// conversation of an agent is a thread (`dm:<agent>:<conversation id>`: a conversation is one agent's, and its
// key reads it), each message from the other agent a notification addressed to the agent
// (`dm:<agent>:<conversation>:<message>`, typed `mention`), and an answer a message sent into the
// conversation, at most once per idempotency key. Only approved conversations are read: a chat request waits for
// the agent's owner, never for warren. Reading a conversation marks all of it read on Moltbook, so every read
// notes the newest message seen and turns the others' messages after the last seen into pending work: a message
// that arrives while the agent answers is not lost.
import { z } from 'zod';
import { HubError } from '../errors.ts';
import type { Comment, Notification, Post } from '../types.ts';
import type { MoltbookRequest } from './http.ts';
import { contentHash, type LedgerEntry, type MoltbookState } from './state.ts';
import { unwrapMoltbookObject } from './wire.ts';

const DM = 'dm:';

/** Whether a post id names a DM conversation. */
export function isConversation(postId: string): boolean {
  return postId.startsWith(DM);
}

/** The thread id of an agent's conversation. */
export function conversationThread(agent: string, conversation: string): string {
  return `${DM}${agent}:${conversation}`;
}

/** The agent and conversation a DM thread id names. */
export function parseConversation(postId: string): { agent: string; conversation: string } {
  const rest = postId.slice(DM.length);
  const at = rest.indexOf(':');
  if (!isConversation(postId) || at <= 0) throw new HubError({ method: '-', path: postId, detail: `${postId} names no DM conversation (dm:<agent>:<conversation>)`, retryable: false });
  return { agent: rest.slice(0, at), conversation: rest.slice(at + 1) };
}

const idLike = z.union([z.string(), z.number()]).transform(String);
const MessageSchema = z.looseObject({ id: idLike, from: z.union([z.string(), z.looseObject({ name: z.string() }).transform((a) => a.name)]), message: z.string(), created_at: z.string() });
type Message = z.infer<typeof MessageSchema>;
const ConversationSchema = z.looseObject({
  conversation_id: idLike.optional(),
  with_agent: z.looseObject({ name: z.string() }).nullish(),
  messages: z.array(z.unknown()).default([]),
});
const ListItemSchema = z.looseObject({ conversation_id: idLike, unread_count: z.number().default(0) });

/** A request as the agent; `poll`: skipped rather than waited for when its pace is used up. */
type Call = (agent: string, r: Omit<MoltbookRequest, 'key'>, poll?: boolean) => Promise<unknown>;

export class MoltbookDirectMessages {
  readonly #call: Call;
  readonly #state: MoltbookState;

  constructor(call: Call, state: MoltbookState) {
    this.#call = call;
    this.#state = state;
  }

  /** New messages to the agent become pending notifications (one /dm/check, then only what it says is unread). */
  async scan(agent: string, signal?: AbortSignal): Promise<void> {
    const check = (await this.#call(agent, { method: 'GET', path: '/agents/dm/check', signal }, true)) as { messages?: { total_unread?: unknown } } | undefined;
    if (!(Number(check?.messages?.total_unread ?? 0) > 0)) return;
    const body = await this.#call(agent, { method: 'GET', path: '/agents/dm/conversations', signal });
    const list = (body as { conversations?: { items?: unknown } | unknown[] } | undefined)?.conversations;
    const items = Array.isArray(list) ? list : Array.isArray(list?.items) ? (list.items as unknown[]) : [];
    for (const raw of items) {
      const item = ListItemSchema.safeParse(raw);
      if (item.success && item.data.unread_count > 0) await this.#read(agent, item.data.conversation_id, item.data.unread_count, signal);
    }
  }

  /** The conversation as a thread: its messages are the comments, oldest first. */
  async thread(postId: string, signal?: AbortSignal): Promise<Post> {
    const { agent, conversation } = parseConversation(postId);
    const { withAgent, messages } = await this.#read(agent, conversation, 0, signal);
    return {
      id: postId,
      title: `Direct messages between ${agent} and ${withAgent}`,
      author: { id: withAgent, name: withAgent },
      content: '(a private conversation: its messages follow)',
      community: null,
      created_at: messages[0]?.created_at ?? new Date(0).toISOString(),
      comments: messages.map((m) => toComment(postId, m)),
      comment_count: messages.length,
    };
  }

  /**
   * Sends `content` into the conversation once per `wkey`: a finished send is answered from the ledger; one that
   * may have happened (5xx, cut connection) is looked for in the conversation (the agent's own message with this
   * text after the one it answers) and never repeated blindly.
   */
  async send(agent: string, postId: string, content: string, parentId: string | null, wkey: string, signal?: AbortSignal): Promise<Comment> {
    const { agent: owner, conversation } = parseConversation(postId);
    if (owner !== agent) throw new HubError({ method: 'POST', path: '/agents/dm/conversations/-/send', detail: `${agent} cannot write into ${owner}'s conversation`, retryable: false });
    const hash = contentHash(content);
    const entry: Omit<LedgerEntry, 'state'> = { agent, kind: 'message', postId, contentHash: hash };
    const prior = await this.#state.ledger(wkey);
    if (prior?.state === 'done' && prior.id) return { id: prior.id, post_id: postId, parent_id: parentId, author: { id: agent, name: agent }, content, created_at: new Date().toISOString() };
    if (prior) {
      const { messages } = await this.#read(agent, conversation, 0, signal);
      const after = parentId ? messages.findIndex((m) => m.id === parentId) : -1;
      const mine = messages.slice(after + 1).find((m) => m.from === agent && contentHash(m.message) === hash);
      if (mine) {
        await this.#state.setLedger(wkey, { ...entry, state: 'done', id: mine.id });
        return toComment(postId, mine);
      }
    }
    await this.#state.setLedger(wkey, { ...entry, state: 'sending' });
    const path = `/agents/dm/conversations/${encodeURIComponent(conversation)}/send`;
    let body: unknown;
    try {
      body = await this.#call(agent, { method: 'POST', path, body: { message: content }, signal });
    } catch (err) {
      if (err instanceof HubError && err.status !== undefined && err.status < 500) await this.#state.forgetLedger(wkey); // refused: nothing sent
      throw err;
    }
    const sent = MessageSchema.safeParse(unwrapMoltbookObject(body, ['message']));
    const id = sent.success ? sent.data.id : `${conversation}:${hash}`;
    await this.#state.setLedger(wkey, { ...entry, state: 'done', id });
    return { id, post_id: postId, parent_id: parentId, author: { id: agent, name: agent }, content, created_at: sent.success ? sent.data.created_at : new Date().toISOString() };
  }

  /**
   * Reads a conversation (Moltbook marks it all read) and makes the other agent's messages newer than the last
   * seen pending; on first contact, the newest `unread` of them (older ones were there before warren).
   */
  async #read(agent: string, conversation: string, unread: number, signal?: AbortSignal): Promise<{ withAgent: string; messages: Message[] }> {
    const body = await this.#call(agent, { method: 'GET', path: `/agents/dm/conversations/${encodeURIComponent(conversation)}`, signal });
    const c = ConversationSchema.safeParse(unwrapMoltbookObject(body, ['conversation']));
    if (!c.success) throw new HubError({ method: 'GET', path: '/agents/dm/conversations/-', detail: 'unexpected conversation shape', retryable: false });
    const messages = c.data.messages.flatMap((m) => {
      const p = MessageSchema.safeParse(m);
      return p.success ? [p.data] : [];
    });
    const withAgent = c.data.with_agent?.name ?? messages.find((m) => m.from !== agent)?.from ?? 'unknown';
    const seen = await this.#state.dmSeen(agent, conversation);
    const theirs = messages.filter((m) => m.from !== agent);
    const fresh = seen === undefined ? theirs.slice(Math.max(0, theirs.length - unread)) : theirs.filter((m) => m.created_at > seen);
    const postId = conversationThread(agent, conversation);
    const ids = fresh.map((m) => `${postId}:${m.id}`);
    const handled = await this.#state.handled(agent, ids);
    const work: Notification[] = fresh
      .filter((m) => !handled.has(`${postId}:${m.id}`))
      .map((m) => ({ id: `${postId}:${m.id}`, type: 'mention' as const, post_id: postId, comment_id: m.id, from: { id: m.from, name: m.from }, content: m.message, created_at: m.created_at, read: false }));
    await this.#state.addPending(agent, work);
    const newest = messages.at(-1)?.created_at;
    if (newest && (seen === undefined || newest > seen)) await this.#state.setDmSeen(agent, conversation, newest);
    return { withAgent, messages };
  }
}

function toComment(postId: string, m: Message): Comment {
  return { id: m.id, post_id: postId, parent_id: null, author: { id: m.from, name: m.from }, content: m.message, created_at: m.created_at };
}
