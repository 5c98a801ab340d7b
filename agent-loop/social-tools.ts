// The hub tools for a social network's features beyond posts and comments (hub-client/social.ts), offered only
// for the features the hub declares (HubCapabilities.social) and, like every hub tool, gated by the agent's
// grants: reads need `hub:read`, votes, follows and subscriptions `hub:write`. A write carries the call's
// idempotency key, so a retried activation never votes twice (a second vote may take the first back).
import type { HubAdapter } from '../hub-client/adapter.ts';
import { hubToolWriteKey } from '../policy/idempotency-keys.ts';
import type { SocialFeature } from '../hub-client/social.ts';
import { deepFreeze, type Tool, type ToolContext, type ToolOutcome } from './tools.ts';

const obj = (properties: Record<string, unknown>, required: string[]): Record<string, unknown> => ({ type: 'object', properties, required, additionalProperties: false });
const ok = (v: unknown): ToolOutcome => ({ status: 'ok', content: JSON.stringify(v) });
const str = (a: Record<string, unknown>, k: string): string => (typeof a[k] === 'string' ? a[k] : '');
const num = (a: Record<string, unknown>, k: string): number | undefined => (typeof a[k] === 'number' ? a[k] : undefined);
const write = (ctx: ToolContext): { idempotencyKey: string; signal: AbortSignal } => ({ idempotencyKey: hubToolWriteKey(ctx.idempotencyKey), signal: ctx.signal });

// Built once and shared by every activation (hub-tools.ts says why).
const HUB_VOTE = deepFreeze({
  name: 'hub_vote',
  description: 'Upvote or downvote a post or a comment, as yourself. Vote for what you genuinely find good (or bad); once per item.',
  parameters: obj({ target: { type: 'string', enum: ['post', 'comment'] }, id: { type: 'string' }, direction: { type: 'string', enum: ['up', 'down'] } }, ['target', 'id', 'direction']),
});
const HUB_FOLLOW = deepFreeze({ name: 'hub_follow', description: 'Follow another agent by name: its posts then appear in your feed.', parameters: obj({ agent: { type: 'string' } }, ['agent']) });
const HUB_SUBSCRIBE = deepFreeze({ name: 'hub_subscribe', description: 'Subscribe to a community (e.g. m/tidepools): its posts then appear in your feed.', parameters: obj({ community: { type: 'string' } }, ['community']) });
const HUB_FEED = deepFreeze({
  name: 'hub_feed',
  description: 'Your personalised feed: new posts of the communities you subscribe to and the agents you follow.',
  parameters: obj({ sort: { type: 'string', enum: ['new', 'hot', 'top'] }, limit: { type: 'integer', minimum: 1, maximum: 50 } }, []),
});
const HUB_SEARCH_COMMENTS = deepFreeze({ name: 'hub_search_comments', description: 'Search comments on the hub.', parameters: obj({ query: { type: 'string' }, limit: { type: 'integer', minimum: 1, maximum: 50 } }, ['query']) });

export function socialTools(hub: HubAdapter, agent: string): Tool[] {
  const social = hub.social;
  const offered = new Set<SocialFeature>(hub.capabilities?.social ?? []);
  if (!social || offered.size === 0) return [];
  const tools: Array<Tool & { feature: SocialFeature }> = [
    {
      feature: 'vote',
      definition: HUB_VOTE,
      readOnly: false,
      grant: 'hub:write',
      execute: async (a, ctx) => {
        await social.vote(agent, { kind: str(a, 'target') === 'comment' ? 'comment' : 'post', id: str(a, 'id') }, str(a, 'direction') === 'down' ? 'down' : 'up', write(ctx));
        return ok({ voted: str(a, 'direction') === 'down' ? 'down' : 'up', id: str(a, 'id') });
      },
    },
    {
      feature: 'follow',
      definition: HUB_FOLLOW,
      readOnly: false,
      grant: 'hub:write',
      execute: async (a, ctx) => {
        await social.follow(agent, str(a, 'agent'), write(ctx));
        return ok({ following: str(a, 'agent') });
      },
    },
    {
      feature: 'subscribe',
      definition: HUB_SUBSCRIBE,
      readOnly: false,
      grant: 'hub:write',
      execute: async (a, ctx) => {
        await social.subscribe(agent, str(a, 'community'), write(ctx));
        return ok({ subscribed: str(a, 'community') });
      },
    },
    {
      feature: 'feed',
      definition: HUB_FEED,
      readOnly: true,
      grant: 'hub:read',
      execute: async (a, ctx) => {
        const sort = str(a, 'sort');
        return ok(await social.feed(agent, { sort: sort === 'hot' || sort === 'top' ? sort : 'new', limit: num(a, 'limit') ?? 15, signal: ctx.signal }));
      },
    },
    {
      feature: 'search_comments',
      definition: HUB_SEARCH_COMMENTS,
      readOnly: true,
      grant: 'hub:read',
      execute: async (a, ctx) => ok(await social.searchComments(agent, str(a, 'query'), { limit: num(a, 'limit') ?? 10, signal: ctx.signal })),
    },
  ];
  return tools.filter((t) => offered.has(t.feature)).map(({ feature: _feature, ...tool }) => tool);
}
