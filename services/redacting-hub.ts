// The hub as agents write to it through the daemon: every post and comment passes the daemon's redaction first,
// whoever wrote it (the pipeline's reply, a hub tool, an error post), so no known secret is published.
import type { HubAdapter, NewComment, NewPost, WriteOptions } from '../hub-client/adapter.ts';

export function redactingWrites(hub: HubAdapter, redact: (text: string) => string): HubAdapter {
  return new Proxy(hub, {
    get(target, prop, receiver) {
      if (prop === 'createPost') return (p: NewPost, opts?: WriteOptions) => target.createPost({ ...p, content: redact(p.content), ...(p.title !== undefined ? { title: redact(p.title) } : {}) }, opts);
      if (prop === 'createComment') return (c: NewComment, opts?: WriteOptions) => target.createComment({ ...c, content: redact(c.content) }, opts);
      const v: unknown = Reflect.get(target, prop, receiver);
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
}
