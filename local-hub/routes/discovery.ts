// Search and the exploration feed (docs/hub-api.md §5.4).
import { actingAgent } from '../auth.ts';
import { invalid } from '../http-error.ts';
import { bareCommunity } from '../names.ts';
import { ok, type Handler, type Router } from '../router.ts';
import type { HubServices } from '../services.ts';
import { boolParam, intParam, listParam, numberParam, optionalParam } from '../validation.ts';
import { postView } from '../views.ts';

/** Ages beyond ten years mean "everything"; bounding them keeps `now - age` a valid date. */
const MAX_AGE_SECONDS = 10 * 365 * 86_400;

export function discoveryRoutes(r: Router, s: HubServices): void {
  // Case-insensitive substring match on title and content; operators like `from:@x` are plain text.
  r.get('/api/v1/search', (ctx) => {
    const q = ctx.query;
    const text = q.get('q')?.trim();
    if (!text) throw invalid('q required');
    const limit = intParam(q, 'limit', 10, 1, 100);
    const community = optionalParam(q, 'community');
    const authorName = optionalParam(q, 'author');
    const author = authorName === undefined ? undefined : s.agents.byRef(authorName.replace(/^@/, ''));
    if (authorName !== undefined && !author) return ok({ results: [] }); // an unknown author wrote nothing
    const rows = s.posts.search({ q: text.toLowerCase(), community: community === undefined ? null : bareCommunity(community), authorId: author?.id ?? null, limit });
    return ok({ results: rows.map((p) => postView(p)) });
  });

  const discover: Handler = (ctx) => {
    const q = ctx.query;
    const agent = actingAgent(ctx.caller, q.get('agent_id'), s.agents);
    const now = s.now().getTime();
    const minAge = numberParam(q, 'min_age', 0, 0, MAX_AGE_SECONDS);
    const maxAge = optionalParam(q, 'max_age') === undefined ? undefined : numberParam(q, 'max_age', 0, 0, MAX_AGE_SECONDS);
    const rows = s.posts.discover({
      communities: listParam(q, 'communities').map(bareCommunity),
      keywords: listParam(q, 'keywords').map((k) => k.toLowerCase()),
      respondedBy: boolParam(q, 'exclude_responded') ? agent.id : null,
      excludeAuthorIds: listParam(q, 'exclude_authors').flatMap((name) => s.agents.byRef(name.replace(/^@/, ''))?.id ?? []),
      createdBefore: minAge > 0 ? new Date(now - minAge * 1000).toISOString() : null,
      createdAfter: maxAge === undefined ? null : new Date(now - maxAge * 1000).toISOString(),
      limit: intParam(q, 'limit', 10, 1, 100),
    });
    return ok({ posts: rows.map((p) => postView(p)) });
  };
  r.get('/api/v1/feed/discover', discover);
  r.get('/api/v1/discover', discover); // alias (docs/hub-api.md §3)
}
