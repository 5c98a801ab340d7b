// The task of an exploration activation (docs/agent-config.md §5.5): who the agent is, how to behave, its limits,
// and the discover feed, filtered to its communities and to threads it has not answered, trimmed to a budget.
import type { Post } from '../hub-client/types.ts';
import type { AgentConfig } from '../store/agent-config.ts';
import type { AgentDefinition } from '../store/definition.ts';
import type { RemainingToday } from './budget.ts';
import type { BuiltContext, ContextOptions } from './context.ts';
import { renderSystem } from './context.ts';
import { sameCommunity } from './skills.ts';
import { fill, loadTemplate } from './template.ts';
import { communityLabel } from './thread.ts';
import { DEFAULT_TASK_TOKENS, estimateTokens } from './tokens.ts';
import { keepFirst } from './trim.ts';

const EXCERPT_CHARS = 500;

/**
 * The posts worth offering: not the agent's own, not a thread it already commented in, and in one of its
 * communities when it names any. The hub's discover already filters; this holds even against a hub that does not.
 */
export function filterFeed(def: Pick<AgentDefinition, 'name' | 'config'>, posts: readonly Post[]): Post[] {
  const communities = def.config.interests.communities;
  return posts.filter((p) => {
    if (p.author.name === def.name) return false;
    if (p.comments?.some((c) => c.author.name === def.name)) return false;
    if (communities.length && p.community && !communities.some((c) => sameCommunity(c, p.community!))) return false;
    return true;
  });
}

function excerpt(text: string): string {
  const t = text.trim();
  return t.length <= EXCERPT_CHARS ? t : `${t.slice(0, EXCERPT_CHARS).trimEnd()}…`;
}

function renderPost(p: Post, n: number): string {
  const where = communityLabel(p.community);
  return [`### ${n}. ${p.title?.trim() || '(No title)'}`, `**By** ${p.author.name}${where ? ` **in** ${where}` : ''}`, `**ID:** ${p.id}`, '', excerpt(p.content), '', '---'].join('\n');
}

/** The feed as numbered posts; over the token budget the later posts are left out, and the text says so. */
export function renderFeed(posts: readonly Post[], tokenBudget = Infinity): string {
  if (posts.length === 0) return 'No new posts match your interests.';
  const rendered = posts.map((p, i) => renderPost(p, i + 1));
  const { kept, omitted } = keepFirst(rendered, (r) => estimateTokens(r) + 1, tokenBudget);
  const tail = omitted ? [`*[${omitted} more post${omitted === 1 ? '' : 's'} left out to fit the context budget]*`] : [];
  return [...kept, ...tail].join('\n\n');
}

function renderRole(def: AgentDefinition): string {
  const { topics, communities, follow_agents } = def.config.interests;
  return [
    def.config.description ?? '',
    topics.length ? `- **Topics:** ${topics.join(', ')}` : '',
    `- **Communities you follow:** ${(communities.length ? communities : ['m/general']).map(communityLabel).join(', ')}`,
    follow_agents.length ? `- **Agents you follow:** ${follow_agents.join(', ')}` : '',
  ]
    .filter(Boolean)
    .join('\n');
}

/** The question/discussion preference, then how sure the agent must be to answer (discovery.min_confidence). */
function renderPreference(discovery: AgentConfig['behavior']['discovery']): string {
  return `${renderKinds(discovery)} Answer only when you are at least ${Math.round(discovery.min_confidence * 100)}% sure your contribution is right and useful.`;
}

function renderKinds(discovery: AgentConfig['behavior']['discovery']): string {
  if (discovery.respond_to_questions && !discovery.respond_to_discussions) return 'Prefer questions to discussions: answer questions, leave open-ended discussions alone.';
  if (!discovery.respond_to_questions && discovery.respond_to_discussions) return 'Prefer discussions to questions: join conversations, leave plain questions to others.';
  if (!discovery.respond_to_questions) return 'Do not answer questions or join discussions unless asked directly.';
  return 'Questions and discussions are both worth your time.';
}

function renderLimits(limits: AgentConfig['behavior']['limits'], remaining: RemainingToday | undefined): string {
  const today = remaining ? `You may still write ${remaining.posts} post${remaining.posts === 1 ? '' : 's'} and ${remaining.comments} comment${remaining.comments === 1 ? '' : 's'} today.` : `At most ${limits.max_daily_posts} posts and ${limits.max_daily_comments} comments a day.`;
  return `${today} At most ${limits.max_responses_per_thread} replies in one thread.`;
}

export function buildExplorationContext(def: AgentDefinition, feed: readonly Post[], opts: ContextOptions = {}): BuiltContext {
  const rendered = renderFeed(feed, opts.taskTokens ?? DEFAULT_TASK_TOKENS);
  const task = fill(loadTemplate('exploration-task', def.shared?.templates), {
    name: def.config.display_name ?? def.name,
    role: renderRole(def),
    preference: renderPreference(def.config.behavior.discovery),
    limits: renderLimits(def.config.behavior.limits, opts.remainingToday),
    feed: rendered,
  });
  const signals = { text: feed.map((p) => `${p.title ?? ''}\n${p.content}`).join('\n'), communities: feed.flatMap((p) => (p.community ? [p.community] : [])) };
  return { system: renderSystem(def, signals, opts, estimateTokens(rendered)), task: task.trim() };
}
