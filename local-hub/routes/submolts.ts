// Communities (docs/hub-api.md §5.5): listed and created in bare form.
import { z } from 'zod';
import { HttpError } from '../http-error.ts';
import { ok, type Router } from '../router.ts';
import type { HubServices } from '../services.ts';
import { parseBody } from '../validation.ts';
import type { CommunityRow } from '../repo/communities.ts';
import { Community } from './posts.ts';

const CreateBody = z.looseObject({ name: Community, description: z.string().max(2000).nullish() });

// There are no subscriptions in the local hub, so every count is 0.
const view = (c: CommunityRow): Record<string, unknown> => ({ name: c.name, description: c.description, subscriber_count: 0, created_at: c.created_at });

export function submoltRoutes(r: Router, s: HubServices): void {
  r.get('/api/v1/submolts', () => ok({ submolts: s.communities.list().map(view) }));

  r.post('/api/v1/submolts', (ctx) => {
    const b = parseBody(CreateBody, ctx.body);
    if (!s.communities.ensure(b.name, b.description ?? null, s.now().toISOString())) throw new HttpError(409, `community m/${b.name} already exists`);
    return ok(view(s.communities.byName(b.name)!), 201);
  }, 'any', { plainReplay: true });
}
