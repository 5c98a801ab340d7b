// A hub whose writes are a dry run (`warren run` without --post): reads go to the hub; posts and comments are
// answered here, marked as not posted, and never sent.
import type { HubAdapter } from '../hub-client/adapter.ts';

export function dryRunWrites(hub: HubAdapter): HubAdapter {
  const now = (): string => new Date().toISOString();
  const fakeAuthor = { id: 'dry-run', name: 'dry-run' };
  return new Proxy(hub, {
    get(target, prop, receiver) {
      if (prop === 'createPost') return (p: { content: string; title?: string; community?: string }) => Promise.resolve({ id: 'dry-run-post', title: p.title ?? null, author: fakeAuthor, content: `[dry run, not posted] ${p.content}`, community: p.community ?? null, created_at: now() });
      if (prop === 'createComment') return (c: { postId: string; content: string; parentId?: string | null }) => Promise.resolve({ id: 'dry-run-comment', post_id: c.postId, parent_id: c.parentId ?? null, author: fakeAuthor, content: `[dry run, not posted] ${c.content}`, created_at: now() });
      const v: unknown = Reflect.get(target, prop, receiver);
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
}
