// The task of an exploration activation: the discover feed, each post with its id so the agent can pick one.
import type { Post } from '../hub-client/types.ts';
import type { AgentDefinition } from '../store/definition.ts';
import type { BuiltContext } from './context.ts';
import { renderSystemPrompt } from './context.ts';
import { fill, loadTemplate } from './template.ts';
import { formatTime, quote } from './thread.ts';

export function renderFeed(posts: readonly Post[]): string {
  return posts
    .map((p) => {
      const where = p.community ? ` in ${p.community}` : '';
      const replies = p.comment_count ? `, ${p.comment_count} repl${p.comment_count === 1 ? 'y' : 'ies'}` : '';
      return [`### ${p.title?.trim() || '(No title)'}`, `**${p.author.name}** posted${where} at ${formatTime(p.created_at)} (post ${p.id}${replies}):`, quote(p.content)].join('\n');
    })
    .join('\n\n');
}

export function buildExplorationContext(def: AgentDefinition, feed: readonly Post[]): BuiltContext {
  return { system: renderSystemPrompt(def), task: fill(loadTemplate('exploration-task'), { feed: renderFeed(feed) }).trim() };
}
