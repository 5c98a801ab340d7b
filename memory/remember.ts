// What an activation leaves in memory, per the agent's `memory.remember` switches. Pure: the pipeline says what
// happened, this decides the entries (kind, text, key); memory/agent-memory.ts redacts and stores them.
// Keys make writing idempotent: per notification (whichever attempt answers it), per post for the project an
// agent took part in, per activation for an exploration.
import type { MemoryConfig } from '../store/agent-config.ts';
import { peopleOf, type MemoryAudience } from './audience.ts';
import type { MemoryKind, NewMemory } from './memory-store.ts';

/** How much of what was asked, and of the answer, an entry keeps. */
const ASKED_CHARS = 400;
const ANSWER_CHARS = 600;
/** No entry is longer, whatever its parts. */
export const MAX_ENTRY_CHARS = 1_500;

/** How the activation's work on one task ended (the pipeline's outcome, reduced to what memory needs). */
export type Ending = { kind: 'answered'; text: string } | { kind: 'posted_by_tool' } | { kind: 'no_action'; reason: string };

export interface PostRef {
  id: string;
  title?: string | null;
  community?: string | null;
}

export type ActivationMemory = (
  | {
      trigger: 'notification';
      notification: { id: string; type: 'mention' | 'reply' | 'follow' | 'like' | 'dm'; from: string; content?: string | null };
      post?: PostRef;
      ending: Ending;
    }
  | { trigger: 'exploration'; activationId: string; post?: PostRef; ending: Ending }
) & {
  /** Whom the run answered: its entries record these people (memory/audience.ts). */
  audience: MemoryAudience;
};

export function excerpt(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length <= max ? flat : `${flat.slice(0, max - 1)}…`;
}

function where(post: PostRef | undefined): string {
  if (!post) return '';
  const title = post.title ? ` "${excerpt(post.title, 120)}"` : ` post ${post.id}`;
  return ` in${title}${post.community ? ` (${post.community})` : ''}`;
}

function endingText(e: Ending): string {
  switch (e.kind) {
    case 'answered':
      return `I answered: "${excerpt(e.text, ANSWER_CHARS)}"`;
    case 'posted_by_tool':
      return 'I answered with my own hub posts.';
    case 'no_action':
      return `I chose not to answer (${e.reason}).`;
    default: {
      const never: never = e;
      throw new Error(`unknown ending ${JSON.stringify(never)}`);
    }
  }
}

export function memoriesOf(settings: MemoryConfig, a: ActivationMemory, at: number): NewMemory[] {
  const { remember } = settings;
  const out: NewMemory[] = [];
  const people = peopleOf(a.audience);
  const add = (key: string, kind: MemoryKind, text: string, who?: string): void => {
    out.push({
      key,
      kind,
      text: excerpt(text, MAX_ENTRY_CHARS),
      createdAt: at,
      ...(who ? { who } : {}),
      ...(people.length ? { people } : {}),
      ...(a.post ? { postId: a.post.id } : {}),
      ...(a.post?.community ? { community: a.post.community } : {}),
    });
  };
  const didSomething = a.ending.kind !== 'no_action';

  if (a.trigger === 'notification') {
    const n = a.notification;
    const said = n.content ? `: "${excerpt(n.content, ASKED_CHARS)}"` : '';
    const heard = remember.conversations_with.length === 0 || remember.conversations_with.includes(n.from);
    if (heard && (n.type === 'mention' || n.type === 'reply')) {
      add(`notification:${n.id}:conversation`, 'conversation', `${n.from} ${n.type === 'mention' ? 'mentioned me' : 'replied to me'}${where(a.post)}${said}. ${endingText(a.ending)}`, n.from);
    }
    if (remember.feedback_received && (n.type === 'reply' || n.type === 'like')) {
      add(`notification:${n.id}:feedback`, 'feedback', `${n.from} ${n.type === 'like' ? 'liked my post' : 'replied to my post or comment'}${where(a.post)}${said}`, n.from);
    }
    if (remember.decisions_made && a.ending.kind === 'no_action') {
      add(`notification:${n.id}:decision`, 'decision', `I decided not to answer ${n.from}'s ${n.type}${where(a.post)} (${a.ending.reason})${said}`, n.from);
    }
  } else if (remember.decisions_made) {
    const decided = a.ending.kind === 'no_action' ? `I explored the feed and chose not to post (${a.ending.reason}).` : `I explored the feed and chose to answer${where(a.post)}. ${endingText(a.ending)}`;
    add(`exploration:${a.activationId}:decision`, 'decision', decided);
  }
  if (remember.projects_worked_on && didSomething && a.post) {
    // One entry per thread, however often the agent comes back to it.
    add(`post:${a.post.id}:project`, 'project', `I took part in the thread${where(a.post)}, post ${a.post.id}.`);
  }
  return out;
}
