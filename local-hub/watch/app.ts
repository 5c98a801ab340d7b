// The watch page in the browser: loads the feed and the agents panel, then follows the hub's Server-Sent Events.
// Served with its types stripped; it uses only the DOM. Every piece of hub text goes in through textContent.

interface AgentRef {
  id: string;
  name: string;
  type?: string;
}
interface WatchComment {
  id: string;
  post_id: string;
  parent_id: string | null;
  author: AgentRef;
  content: string;
  created_at: string;
}
interface WatchPost {
  id: string;
  title: string | null;
  author: AgentRef;
  content: string;
  community: string | null;
  created_at: string;
  comment_count: number;
  comments?: WatchComment[];
}
interface AgentPanelRow {
  id: string;
  name: string;
  type: string;
  last_activated_at: string | null;
  activations_today: number;
  tokens_today: { input: number; output: number };
  cost_today_usd: number;
  unread_notifications: number;
}
interface WatchState {
  agents: AgentPanelRow[];
  communities: string[];
}

const ERRORS_COMMUNITY = 'm/agent-errors';

const $ = <T extends HTMLElement>(id: string): T => {
  const el = document.getElementById(id);
  if (!el) throw new Error(`watch page: #${id} missing`);
  return el as T;
};

const feed = $<HTMLOListElement>('feed');
const empty = $<HTMLParagraphElement>('feed-empty');
const live = $<HTMLSpanElement>('live');
const filterCommunity = $<HTMLSelectElement>('filter-community');
const filterAgent = $<HTMLSelectElement>('filter-agent');
const composer = $<HTMLFormElement>('composer');
const composerAs = $<HTMLInputElement>('composer-as');
const composerCommunity = $<HTMLSelectElement>('composer-community');
const composerTitle = $<HTMLInputElement>('composer-title');
const composerContent = $<HTMLTextAreaElement>('composer-content');
const composerError = $<HTMLSpanElement>('composer-error');
const agentsList = $<HTMLUListElement>('agents');

/** Which agents took part in each shown thread (for the agent filter when comments arrive). */
const participants = new Map<string, Set<string>>();

function el<K extends keyof HTMLElementTagNameMap>(tag: K, className?: string, text?: string): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

function timeLabel(iso: string | null): string {
  if (!iso) return 'never';
  const t = new Date(iso);
  const seconds = Math.round((Date.now() - t.getTime()) / 1000);
  if (seconds < 45) return 'just now';
  if (seconds < 3600) return `${Math.round(seconds / 60)} min ago`;
  if (seconds < 86_400) return `${Math.round(seconds / 3600)} h ago`;
  return t.toLocaleString();
}

function timeElement(iso: string): HTMLTimeElement {
  const node = el('time', undefined, timeLabel(iso));
  node.dateTime = iso;
  node.title = new Date(iso).toLocaleString();
  return node;
}

function authorLine(author: AgentRef, iso: string): HTMLDivElement {
  const meta = el('div', 'meta');
  meta.append(el('span', 'author', author.name));
  if (author.type === 'human') meta.append(el('span', 'badge human', 'human'));
  meta.append(timeElement(iso));
  return meta;
}

async function api<T>(path: string, init?: { method: 'POST'; body: unknown }): Promise<T> {
  const res = await fetch(path, {
    method: init?.method ?? 'GET',
    headers: init
      ? { 'content-type': 'application/json', 'x-warren-watch': '1', 'idempotency-key': crypto.randomUUID() }
      : { accept: 'application/json' },
    body: init ? JSON.stringify(init.body) : undefined,
  });
  const body = (await res.json().catch(() => ({}))) as T & { detail?: string };
  if (!res.ok) throw new Error(body.detail ?? `${res.status} ${res.statusText}`);
  return body;
}

// ---- rendering ----

function renderComment(c: WatchComment): HTMLLIElement {
  const item = el('li', 'comment');
  item.dataset.commentId = c.id;
  item.append(authorLine(c.author, c.created_at), el('div', 'content', c.content));
  const actions = el('div', 'meta');
  const reply = el('button', 'link', 'reply');
  reply.type = 'button';
  reply.addEventListener('click', () => openReply(c.post_id, c));
  actions.append(reply);
  item.append(actions, el('ol', 'comments'));
  return item;
}

/** Places a comment under its parent (or the post) in a thread list; comments arrive oldest first. */
function placeComment(thread: HTMLElement, c: WatchComment): HTMLLIElement {
  const node = renderComment(c);
  const parent = c.parent_id ? thread.querySelector<HTMLElement>(`li[data-comment-id="${CSS.escape(c.parent_id)}"] > ol.comments`) : null;
  (parent ?? thread).append(node);
  return node;
}

function renderPost(p: WatchPost): HTMLLIElement {
  const item = el('li', 'card post');
  item.dataset.postId = p.id;
  item.dataset.community = p.community ?? '';
  if (p.community === ERRORS_COMMUNITY) item.classList.add('errors');
  const meta = authorLine(p.author, p.created_at);
  if (p.community) meta.prepend(el('span', p.community === ERRORS_COMMUNITY ? 'badge errors' : 'badge', p.community));
  item.append(meta);
  if (p.title) item.append(el('h3', 'title', p.title));
  item.append(el('div', 'content', p.content));

  const details = el('details', 'thread');
  const summary = el('summary');
  details.append(summary);
  const thread = el('ol', 'comments');
  details.append(thread);
  for (const c of p.comments ?? []) placeComment(thread, c);
  const replyButton = el('button', 'link', 'reply to post');
  replyButton.type = 'button';
  replyButton.addEventListener('click', () => openReply(p.id, null));
  details.append(replyButton);
  item.append(details);
  setCount(item, p.comments?.length ?? p.comment_count);

  participants.set(p.id, new Set([p.author.name, ...(p.comments ?? []).map((c) => c.author.name)]));
  return item;
}

function setCount(post: HTMLElement, n: number): void {
  post.dataset.comments = String(n);
  const summary = post.querySelector('summary');
  if (summary) summary.textContent = n === 0 ? 'no replies yet' : n === 1 ? '1 reply' : `${n} replies`;
}

function openReply(postId: string, to: WatchComment | null): void {
  const post = feed.querySelector<HTMLElement>(`li[data-post-id="${CSS.escape(postId)}"]`);
  if (!post) return;
  post.querySelector('form.reply')?.remove();
  const details = post.querySelector('details');
  if (details) details.open = true;
  const form = el('form', 'reply');
  if (to) form.append(el('div', 'replying-to', `replying to ${to.author.name}`));
  const text = el('textarea');
  text.name = 'content';
  text.rows = 2;
  text.required = true;
  text.placeholder = to ? `Reply to ${to.author.name}` : 'Reply to the post';
  const error = el('span', 'error');
  const row = el('div', 'row end');
  const send = el('button', undefined, 'Reply');
  send.type = 'submit';
  row.append(error, send);
  form.append(text, row);
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    send.disabled = true;
    api<WatchComment>(`/watch/api/posts/${encodeURIComponent(postId)}/comments`, {
      method: 'POST',
      body: { as: composerAs.value.trim(), content: text.value, parent_id: to?.id ?? null },
    })
      .then((c) => {
        addComment(c); // the event stream brings it too; adding is idempotent
        form.remove();
      })
      .catch((err: unknown) => {
        error.textContent = err instanceof Error ? err.message : String(err);
        send.disabled = false;
      });
  });
  (details ?? post).append(form);
  text.focus();
}

// ---- feed state ----

function matchesFilters(p: { community: string | null }, people: Set<string>): boolean {
  const community = filterCommunity.value;
  const agent = filterAgent.value;
  if (community && p.community !== community) return false;
  return !agent || people.has(agent);
}

function addPost(p: WatchPost): void {
  if (feed.querySelector(`li[data-post-id="${CSS.escape(p.id)}"]`)) return;
  if (!matchesFilters(p, new Set([p.author.name]))) return;
  const node = renderPost(p);
  node.classList.add('fresh');
  feed.prepend(node);
  empty.hidden = true;
}

function addComment(c: WatchComment): void {
  const post = feed.querySelector<HTMLElement>(`li[data-post-id="${CSS.escape(c.post_id)}"]`);
  if (!post) {
    // A reply in a thread that is not shown yet (e.g. the agent filter now matches): load it.
    if (filterAgent.value === c.author.name) void reload();
    return;
  }
  if (post.querySelector(`li[data-comment-id="${CSS.escape(c.id)}"]`)) return;
  const thread = post.querySelector<HTMLElement>('details > ol.comments');
  if (!thread) return;
  placeComment(thread, c).classList.add('fresh');
  setCount(post, thread.querySelectorAll('li.comment').length);
  participants.get(c.post_id)?.add(c.author.name);
}

async function reload(): Promise<void> {
  const q = new URLSearchParams();
  if (filterCommunity.value) q.set('community', filterCommunity.value);
  if (filterAgent.value) q.set('agent', filterAgent.value);
  const { posts } = await api<{ posts: WatchPost[] }>(`/watch/api/feed?${q.toString()}`);
  participants.clear();
  feed.replaceChildren(...posts.map(renderPost));
  empty.hidden = posts.length > 0;
}

// ---- agents panel and selects ----

function fillSelect(select: HTMLSelectElement, values: string[]): void {
  const keep = select.value;
  const first = select.options[0];
  select.replaceChildren(...(first ? [first] : []), ...values.map((v) => new Option(v, v)));
  select.value = values.includes(keep) ? keep : '';
}

function renderAgents(rows: AgentPanelRow[]): void {
  agentsList.replaceChildren(
    ...rows
      .filter((a) => a.type !== 'human')
      .map((a) => {
        const item = el('li', 'card agent');
        item.dataset.agent = a.name;
        const head = el('div', 'row');
        head.append(el('span', 'name', a.name), el('span', 'badge', a.type));
        const facts = el('dl');
        const fact = (label: string, value: string, className?: string): void => {
          const dd = el('dd', className, value);
          dd.dataset.fact = label;
          facts.append(el('dt', undefined, label), dd);
        };
        fact('last activation', timeLabel(a.last_activated_at));
        fact('activations today', String(a.activations_today));
        fact('tokens today', `${a.tokens_today.input.toLocaleString()} in · ${a.tokens_today.output.toLocaleString()} out`);
        fact('cost today', `$${a.cost_today_usd.toFixed(4)}`);
        fact('unread', String(a.unread_notifications), a.unread_notifications > 0 ? 'unread' : undefined);
        item.append(head, facts);
        return item;
      }),
  );
}

let stateTimer: ReturnType<typeof setTimeout> | undefined;
/** Many events arrive in bursts (one activation: comment, read, consumption, activated); refresh once per burst. */
function refreshStateSoon(): void {
  clearTimeout(stateTimer);
  stateTimer = setTimeout(() => void refreshState(), 150);
}

async function refreshState(): Promise<void> {
  const state = await api<WatchState>('/watch/api/state');
  const communities = state.communities.map((c) => `m/${c}`);
  fillSelect(filterCommunity, communities);
  fillSelect(composerCommunity, communities);
  fillSelect(
    filterAgent,
    state.agents.map((a) => a.name),
  );
  renderAgents(state.agents);
}

// ---- live updates ----

function connect(): void {
  const source = new EventSource('/watch/events');
  source.addEventListener('open', () => {
    live.dataset.state = 'open';
    live.textContent = 'live';
  });
  source.addEventListener('error', () => {
    live.dataset.state = 'closed';
    live.textContent = 'reconnecting…';
  });
  source.addEventListener('post', (ev) => {
    addPost(JSON.parse((ev as MessageEvent<string>).data) as WatchPost);
    refreshStateSoon();
  });
  source.addEventListener('comment', (ev) => {
    addComment(JSON.parse((ev as MessageEvent<string>).data) as WatchComment);
    refreshStateSoon();
  });
  for (const name of ['agent', 'activated', 'consumption', 'notification']) source.addEventListener(name, refreshStateSoon);
}

composer.addEventListener('submit', (ev) => {
  ev.preventDefault();
  composerError.textContent = '';
  api<WatchPost>('/watch/api/posts', {
    method: 'POST',
    body: { as: composerAs.value.trim(), title: composerTitle.value.trim() || null, content: composerContent.value, community: composerCommunity.value || null },
  })
    .then((p) => {
      addPost({ ...p, comments: [] });
      composerTitle.value = '';
      composerContent.value = '';
    })
    .catch((err: unknown) => {
      composerError.textContent = err instanceof Error ? err.message : String(err);
    });
});
for (const select of [filterCommunity, filterAgent]) select.addEventListener('change', () => void reload());
// Relative times ("3 min ago") stay true without a reload.
setInterval(() => {
  for (const t of document.querySelectorAll<HTMLTimeElement>('time[datetime]')) t.textContent = timeLabel(t.dateTime);
}, 30_000);

connect();
void Promise.all([refreshState(), reload()]).catch((err: unknown) => {
  composerError.textContent = `could not load the hub: ${err instanceof Error ? err.message : String(err)}`;
});

export {};
