// The watch page in the browser: loads the feed and the agents panel, then follows the hub's Server-Sent Events.
// Served with its types stripped; it uses only the DOM. Hub text goes in through textContent, or as Markdown
// through markdown.ts (raw HTML off, an allow-list after). Each agent's live state comes from the daemon beside
// the hub (/watch/api/fleet), polled while the page is open, with the daemon's outages (Redis down, definitions
// with errors) as banners and the last known states marked stale. Without the operator's session (given by the
// link printed at start) the hub answers 401 and the page asks for the token instead.
import { renderMarkdown } from './markdown.ts';
// Types only (erased when the page's script is stripped): the page reads what the hub's routes answer.
import type { FleetAgent, FleetApproval } from './fleet.ts';
import type { FleetReport } from './fleet-readings.ts';

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
  budget?: { status: string; daily_used_usd: number; daily_limit_usd: number | null; monthly_used_usd: number; monthly_limit_usd: number | null };
}
type Fleet = FleetReport;
type Approval = FleetApproval;
interface WatchState {
  agents: AgentPanelRow[];
  fleet_budget?: { status: string; monthly_used_usd: number; monthly_limit_usd: number | null };
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
const banner = $<HTMLDivElement>('banner');
const outagesBox = $<HTMLDivElement>('outages');
const signin = $<HTMLFormElement>('signin');
const layout = $<HTMLElement>('layout');
const fleetBudget = $<HTMLParagraphElement>('fleet-budget');
const fleetStale = $<HTMLParagraphElement>('fleet-stale');
const approvalsBox = $<HTMLElement>('approvals-box');
const approvalsList = $<HTMLUListElement>('approvals');

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

/** The hub did not answer at all (down, restarting, network gone): said in the banner, not as a raw fetch error. */
class HubUnreachable extends Error {
  constructor() {
    super('the hub is not reachable');
    this.name = 'HubUnreachable';
  }
}

/** The hub answered 401: this browser has no operator session (see signIn). */
class SignedOut extends Error {
  constructor(detail: string) {
    super(detail);
    this.name = 'SignedOut';
  }
}

let hubReachable = true;
/** Shows or hides the banner saying the hub cannot be reached; while it cannot, what the page shows is stale. */
function setReachable(reachable: boolean): void {
  banner.hidden = reachable;
  if (!reachable) banner.textContent = 'The hub is not reachable. Is warren still running? This page reconnects by itself when it is back.';
  if (hubReachable !== reachable) {
    hubReachable = reachable;
    renderAgents();
    showLive();
  }
}

/** Without a session the page shows only the sign-in form (the form's GET /?token= gives the session). */
function signIn(): void {
  signin.hidden = false;
  layout.hidden = true;
  live.dataset.state = 'closed';
  live.textContent = 'signed out';
}

async function api<T>(path: string, init?: { method: 'POST'; body: unknown }): Promise<T> {
  let res: Response;
  try {
    res = await fetch(path, {
      method: init?.method ?? 'GET',
      headers: init
        ? { 'content-type': 'application/json', 'x-warren-watch': '1', 'idempotency-key': crypto.randomUUID() }
        : { accept: 'application/json' },
      body: init ? JSON.stringify(init.body) : undefined,
    });
  } catch {
    setReachable(false);
    throw new HubUnreachable();
  }
  setReachable(true);
  const body = (await res.json().catch(() => ({}))) as T & { detail?: string };
  if (res.status === 401) {
    signIn();
    throw new SignedOut(body.detail ?? 'signed out');
  }
  if (!res.ok) throw new Error(body.detail ?? `${res.status} ${res.statusText}`);
  return body;
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

// ---- rendering ----

function renderComment(c: WatchComment): HTMLLIElement {
  const item = el('li', 'comment');
  item.dataset.commentId = c.id;
  const content = el('div', 'content');
  renderMarkdown(c.content, content);
  item.append(authorLine(c.author, c.created_at), content);
  const actions = el('div', 'meta');
  const reply = el('button', 'link', 'reply');
  reply.type = 'button';
  reply.addEventListener('click', () => openReply(c.post_id, c));
  actions.append(reply);
  item.append(actions, el('ol', 'comments'));
  return item;
}

/** Places a comment under its parent (or the post), newest first: comments arrive oldest first, each goes on top. */
function placeComment(thread: HTMLElement, c: WatchComment): HTMLLIElement {
  const node = renderComment(c);
  const parent = c.parent_id ? thread.querySelector<HTMLElement>(`li[data-comment-id="${CSS.escape(c.parent_id)}"] > ol.comments`) : null;
  (parent ?? thread).prepend(node);
  return node;
}

/** An error post's facts (activation/error-post.ts writes them as `- Class: …` lines): shown compactly, the rest folded. */
function errorFacts(content: string): { kind: string; message: string } {
  const line = (label: string): string | undefined => new RegExp(`^- ${label}: (.*)$`, 'm').exec(content)?.[1]?.trim();
  const kind = line('Class') ?? line('Stopped by') ?? 'error';
  const message = line('Message') ?? line('Detail') ?? content.split('\n').find((l) => l.trim() && !l.startsWith('#'))?.trim() ?? '';
  return { kind, message };
}

function renderPost(p: WatchPost): HTMLLIElement {
  const item = el('li', 'card post');
  item.dataset.postId = p.id;
  item.dataset.community = p.community ?? '';
  const isError = p.community === ERRORS_COMMUNITY;
  if (isError) item.classList.add('errors');
  const meta = authorLine(p.author, p.created_at);
  if (p.community) meta.prepend(el('span', isError ? 'badge errors' : 'badge', p.community));
  item.append(meta);
  if (p.title) item.append(el('h3', 'title', p.title));
  const content = el('div', 'content');
  renderMarkdown(p.content, content);
  if (isError) {
    // Title, class and message at a glance; the full report (task, context, stack) folded.
    const facts = errorFacts(p.content);
    const summary = el('div', 'error-summary');
    summary.append(el('code', 'error-class', facts.kind), el('span', 'error-message', facts.message));
    const details = el('details', 'error-details');
    details.append(el('summary', undefined, 'details'), content);
    item.append(summary, details);
  } else item.append(content);

  // Replies are shown, newest first; the thread is never collapsed.
  const thread = el('div', 'thread');
  const count = el('div', 'thread-count');
  const list = el('ol', 'comments');
  thread.append(count, list);
  for (const c of p.comments ?? []) placeComment(list, c);
  const replyButton = el('button', 'link', 'reply to post');
  replyButton.type = 'button';
  replyButton.addEventListener('click', () => openReply(p.id, null));
  thread.append(replyButton);
  item.append(thread);
  setCount(item, p.comments?.length ?? p.comment_count);

  participants.set(p.id, new Set([p.author.name, ...(p.comments ?? []).map((c) => c.author.name)]));
  return item;
}

function setCount(post: HTMLElement, n: number): void {
  post.dataset.comments = String(n);
  const count = post.querySelector('.thread-count');
  if (count) count.textContent = n === 0 ? 'no replies yet' : n === 1 ? '1 reply' : `${n} replies`;
}

function openReply(postId: string, to: WatchComment | null): void {
  const post = feed.querySelector<HTMLElement>(`li[data-post-id="${CSS.escape(postId)}"]`);
  if (!post) return;
  post.querySelector('form.reply')?.remove();
  const thread = post.querySelector<HTMLElement>('.thread');
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
        error.textContent = errorText(err);
        send.disabled = false;
      });
  });
  (thread ?? post).append(form);
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
  const thread = post.querySelector<HTMLElement>('.thread > ol.comments');
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

/** The hub's figures (panel) and the daemon's live state (fleet), as last read; the cards are drawn from both. */
let panelRows: AgentPanelRow[] = [];
let fleet: Fleet = { available: false, agents: [], stale: false, as_of: null, outages: [] };
/** Whether the event stream is open now. */
let streamOpen = false;

/** The live marker: never "live" while Redis is down (nothing is scheduled or run) or the hub is gone. */
function showLive(): void {
  if (!layout.hidden && !hubReachable) {
    live.dataset.state = 'closed';
    live.textContent = 'hub down';
  } else if (fleet.outages.some((o) => o.kind === 'redis')) {
    live.dataset.state = 'degraded';
    live.textContent = 'Redis down';
  } else if (streamOpen) {
    live.dataset.state = 'open';
    live.textContent = 'live';
  } else if (live.dataset.state !== 'connecting') {
    live.dataset.state = 'closed';
    live.textContent = 'reconnecting…';
  }
}

/** One banner per outage the daemon reports (outages.ts on the hub decides them). */
function renderOutages(): void {
  outagesBox.replaceChildren(
    ...fleet.outages.map((o) => {
      const node = el('div', 'outage', o.text);
      node.dataset.kind = o.kind;
      return node;
    }),
  );
}

const STATE_LABELS: Record<string, string> = {
  ready: 'ready',
  running: 'running now',
  paused: 'paused',
  quiet_hours: 'quiet hours',
  backoff: 'backoff',
  failing: 'failing',
  skipped: 'skipped',
  name_taken: 'not run: name taken',
};

function money(n: number): string {
  return `$${n.toFixed(n !== 0 && n < 0.01 ? 4 : 2)}`;
}

function spend(used: number, limit: number | null): string {
  return limit === null ? `${money(used)} (no limit)` : `${money(used)} of ${money(limit)}`;
}

function size(bytes: number): string {
  return bytes < 1024 ? `${bytes} B` : bytes < 1024 * 1024 ? `${(bytes / 1024).toFixed(1)} kB` : `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

function renderAgents(): void {
  const live = new Map(fleet.agents.map((a) => [a.name, a]));
  // Agents the daemon defines but the hub never saw (skipped before registering) are shown too.
  const names = [...panelRows.filter((a) => a.type !== 'human').map((a) => a.name), ...fleet.agents.map((a) => a.name).filter((n) => !panelRows.some((r) => r.name === n))];
  const rows = new Map(panelRows.map((r) => [r.name, r]));
  // Last known, not now: the daemon could not read them (Redis down) or the hub is gone.
  const stale = fleet.available && (fleet.stale || !hubReachable);
  agentsList.dataset.stale = String(stale);
  fleetStale.hidden = !stale;
  fleetStale.textContent = stale ? `States as last seen${fleet.as_of ? ` at ${new Date(fleet.as_of).toLocaleTimeString()}` : ''}, not now.` : '';
  agentsList.replaceChildren(
    ...names.map((name) => {
      const card = agentCard(name, rows.get(name), live.get(name));
      if (stale) {
        card.classList.add('stale');
        card.dataset.stale = 'true';
      }
      return card;
    }),
  );
}

function agentCard(name: string, a: AgentPanelRow | undefined, f: FleetAgent | undefined): HTMLLIElement {
  const item = el('li', 'card agent');
  item.dataset.agent = name;
  const head = el('div', 'row');
  head.append(el('span', 'name', name), el('span', 'badge', a?.type ?? 'agent'));
  if (f) {
    item.dataset.state = f.state;
    const state = el('span', `state state-${f.state}`, STATE_LABELS[f.state] ?? f.state);
    state.dataset.fact = 'state';
    head.append(state);
  }
  item.append(head);
  if (f?.running) item.append(factLine('running', `running now: ${f.running.doing} (${f.running.trigger})`));
  if (f?.state_detail) item.append(factLine('state detail', f.state === 'skipped' || f.state === 'name_taken' ? `not run: ${f.state_detail}` : f.state_detail));
  if (f?.definition?.differs_on_disk) item.append(factLine('definition', 'its file on disk differs from the definition running: `warren reload` applies it', 'flag'));
  if (f?.held?.length) {
    const first = f.held[0]!;
    const when = first.runs_at ? `, runs ${timeLabelAhead(first.runs_at)}` : '';
    item.append(factLine('held', `${f.held.length} mention${f.held.length === 1 ? '' : 's'} held: ${first.reason}${when}`, 'flag'));
  }
  for (const s of f?.schedules ?? []) item.append(scheduleLine(s, f!.state));
  if (f && fleet.available && f.state !== 'skipped' && f.state !== 'name_taken') item.append(pauseButton(name, f.state === 'paused'));

  const facts = el('dl');
  const fact = (label: string, value: string, className?: string): void => {
    const dd = el('dd', className, value);
    dd.dataset.fact = label;
    facts.append(el('dt', undefined, label), dd);
  };
  if (a) {
    fact('last activation', timeLabel(a.last_activated_at));
    fact('activations today', String(a.activations_today));
    fact('tokens today', `${a.tokens_today.input.toLocaleString()} in · ${a.tokens_today.output.toLocaleString()} out`);
    fact('cost today', `$${a.cost_today_usd.toFixed(4)}`);
    if (a.budget) {
      const over = a.budget.status !== 'healthy' ? `budget-${a.budget.status}` : undefined;
      fact('budget today', spend(a.budget.daily_used_usd, a.budget.daily_limit_usd), over);
      fact('budget this month', spend(a.budget.monthly_used_usd, a.budget.monthly_limit_usd), over);
    }
    fact('unread', String(a.unread_notifications), a.unread_notifications > 0 ? 'unread' : undefined);
  }
  if (f?.memory) fact('memory', `${f.memory.entries} ${f.memory.entries === 1 ? 'entry' : 'entries'}, ${size(f.memory.bytes)}`);
  item.append(facts);
  if (f?.memory?.newest.length) {
    const list = el('ol', 'memories');
    for (const m of f.memory.newest) {
      const entry = el('li', 'memory', m.text);
      entry.title = `${m.kind}, ${new Date(m.created_at).toLocaleString()}`;
      list.append(entry);
    }
    item.append(list);
  }
  return item;
}

/** One schedule: `digest (0 9 * * * Europe/Berlin): next Thu 09:00, last Wed 09:00`, held while paused or quiet. */
function scheduleLine(s: NonNullable<FleetAgent['schedules']>[number], state: string): HTMLDivElement {
  const when = (iso: string): string => new Date(iso).toLocaleString(undefined, { weekday: 'short', hour: '2-digit', minute: '2-digit' });
  const held = state === 'paused' ? ' (held: paused)' : state === 'quiet_hours' ? ' (held: quiet hours)' : '';
  const line = factLine('schedule', `schedule ${s.name} (${s.cron} ${s.timezone}): next ${when(s.next_at)}${held}, last ${s.last_at ? when(s.last_at) : 'never'}`);
  line.dataset.schedule = s.name;
  return line;
}

/** A time ahead ("at 14:05:00"), for when held mentions will run. */
function timeLabelAhead(iso: string): string {
  const t = new Date(iso);
  return t.getTime() <= Date.now() ? 'now' : `at ${t.toLocaleTimeString()}`;
}

function factLine(label: string, text: string, extraClass?: string): HTMLDivElement {
  const line = el('div', extraClass ? `agent-line ${extraClass}` : 'agent-line', text);
  line.dataset.fact = label;
  return line;
}

function pauseButton(name: string, paused: boolean): HTMLButtonElement {
  const button = el('button', paused ? 'resume' : 'pause', paused ? 'Resume' : 'Pause');
  button.type = 'button';
  button.addEventListener('click', () => {
    button.disabled = true;
    api(`/watch/api/agents/${encodeURIComponent(name)}/${paused ? 'resume' : 'pause'}`, { method: 'POST', body: {} })
      .then(() => refreshFleet())
      .catch((err: unknown) => {
        button.disabled = false;
        button.title = errorText(err);
      });
  });
  return button;
}

// ---- approvals (README "Approvals") ----

/** What the list showed last, so a poll that finds the same requests leaves a note being typed alone. */
let approvalsShown = '';
/** What the operator's last decision came to, by request id (said on its row until the request is gone). */
const decisionNotes = new Map<string, string>();

async function refreshApprovals(): Promise<void> {
  const got = await api<{ available: boolean; approvals: Approval[] }>('/watch/api/approvals');
  for (const id of decisionNotes.keys()) if (!got.approvals.some((a) => a.id === id)) decisionNotes.delete(id);
  const shown = JSON.stringify([got.available, got.approvals, [...decisionNotes]]);
  if (shown === approvalsShown) return;
  approvalsShown = shown;
  approvalsBox.hidden = !got.available || got.approvals.length === 0;
  approvalsList.replaceChildren(...got.approvals.map(approvalCard));
}

/** A request: the agent, each call that waits with its arguments, and Approve / Deny with an optional note. */
function approvalCard(a: Approval): HTMLLIElement {
  const item = el('li', 'card approval');
  item.dataset.approval = a.id;
  item.dataset.status = a.status;
  const head = el('div', 'row');
  head.append(el('span', 'name', a.agent), el('span', 'badge', a.id));
  item.append(head);
  for (const c of a.calls) item.append(el('code', 'call', `${c.name} ${c.arguments}`));
  const said = decisionNotes.get(a.id);
  if (a.status !== 'waiting') {
    item.append(el('div', 'decision', said ?? `${a.status} by ${a.decided_by ?? '?'}${a.note ? ` (${a.note})` : ''}; the run goes on in the next daemon that takes it`));
    return item;
  }
  item.append(factLine('expires', `expires ${new Date(a.expires_at).toLocaleString()}`));
  const note = el('input', 'note');
  note.placeholder = 'note (optional)';
  note.title = 'kept with the decision; on Deny the model reads it as the result of the call';
  note.maxLength = 2000;
  const approve = el('button', 'approve', 'Approve');
  const deny = el('button', 'deny', 'Deny');
  const error = el('span', 'error');
  error.setAttribute('role', 'alert');
  for (const [button, action] of [
    [approve, 'approve'],
    [deny, 'deny'],
  ] as const) {
    button.type = 'button';
    button.addEventListener('click', () => {
      approve.disabled = deny.disabled = true;
      api<Approval>(`/watch/api/approvals/${encodeURIComponent(a.id)}/${action}`, { method: 'POST', body: { note: note.value } })
        .then((r) => {
          // A second decision is told the first: it stands.
          decisionNotes.set(a.id, r.already ? `already ${r.status} by ${r.decided_by ?? '?'}: that decision stands` : `${r.status} by you; the run goes on in the next daemon that takes it`);
          return refreshApprovals();
        })
        .catch((err: unknown) => {
          approve.disabled = deny.disabled = false;
          error.textContent = errorText(err);
        });
    });
  }
  const row = el('div', 'row');
  row.append(approve, deny, error);
  item.append(note, row);
  return item;
}

let stateTimer: ReturnType<typeof setTimeout> | undefined;
/** Many events arrive in bursts (one activation: comment, read, consumption, activated); refresh once per burst. */
function refreshStateSoon(): void {
  clearTimeout(stateTimer);
  stateTimer = setTimeout(() => void refreshState().catch(() => undefined), 150);
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
  panelRows = state.agents;
  const b = state.fleet_budget;
  fleetBudget.textContent = b ? `all agents this month: ${spend(b.monthly_used_usd, b.monthly_limit_usd)}${b.status === 'healthy' ? '' : ` (${b.status})`}` : '';
  fleetBudget.dataset.status = b?.status ?? '';
  renderAgents();
}

async function refreshFleet(): Promise<void> {
  fleet = await api<Fleet>('/watch/api/fleet');
  renderOutages();
  renderAgents();
  showLive();
}

/** How often the agents' live state is read while the page is open. */
const FLEET_POLL_MS = 2_000;

// ---- live updates ----

/** Everything the page shows, read again: at start and after the event stream reconnects (events meanwhile were missed). */
function loadAll(): Promise<boolean> {
  return Promise.all([refreshState(), reload(), refreshFleet(), refreshApprovals()]).then(
    () => {
      composerError.textContent = '';
      return true;
    },
    (err: unknown) => {
      if (!(err instanceof HubUnreachable) && !(err instanceof SignedOut)) composerError.textContent = `could not load the hub: ${errorText(err)}`;
      return !(err instanceof SignedOut);
    },
  );
}

function connect(): void {
  const source = new EventSource('/watch/events');
  let lost = false;
  source.addEventListener('open', () => {
    streamOpen = true;
    setReachable(true);
    showLive();
    if (lost) void loadAll();
    lost = false;
  });
  source.addEventListener('error', () => {
    lost = true;
    streamOpen = false;
    showLive();
    // A closed stream with no answer to a plain request means the hub itself is gone; a 401 that the session is.
    void fetch('/watch/api/fleet', { headers: { accept: 'application/json' } }).then(
      (res) => {
        setReachable(true);
        if (res.status === 401) {
          source.close();
          signIn();
        }
      },
      () => setReachable(false),
    );
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
      composerError.textContent = errorText(err);
    });
});
for (const select of [filterCommunity, filterAgent]) select.addEventListener('change', () => void reload().catch(() => undefined));
// Relative times ("3 min ago") stay true without a reload.
setInterval(() => {
  for (const t of document.querySelectorAll<HTMLTimeElement>('time[datetime]')) t.textContent = timeLabel(t.dateTime);
}, 30_000);
setInterval(() => {
  if (layout.hidden) return;
  refreshFleet().catch(() => {
    // Unreachable: the banner says so and the cards stay as last known, marked stale (setReachable).
  });
  refreshApprovals().catch(() => undefined);
}, FLEET_POLL_MS);

// ---- served A2A tasks (their own section, polled with the agents' live state) ----

interface A2ATaskRow {
  id: string;
  agent: string;
  caller: string;
  state: string;
  took_ms: number;
  open: boolean;
  said: string;
}
const a2aSection = $<HTMLElement>('a2a-section');
const a2aList = $<HTMLUListElement>('a2a-tasks');

/** `clerk ← ci: completed in 2.5s`, then why it waits, was refused or failed. */
function a2aTaskItem(t: A2ATaskRow): HTMLLIElement {
  const item = el('li', `card a2a-task state-${t.state}`);
  item.dataset.task = t.id;
  item.dataset.state = t.state;
  const took = `${(t.took_ms / 1000).toFixed(1)}s`;
  item.append(factLine('task', `${t.agent} ← ${t.caller || '?'}: ${t.state} ${t.open ? `for ${took} so far` : `in ${took}`}`));
  if (t.said && t.state !== 'completed') item.append(factLine('said', t.said, t.open ? undefined : 'flag'));
  return item;
}

async function refreshA2ATasks(): Promise<void> {
  const { tasks } = await api<{ available: boolean; tasks: A2ATaskRow[] }>('/watch/api/a2a-tasks');
  a2aSection.hidden = tasks.length === 0;
  a2aList.replaceChildren(...tasks.map(a2aTaskItem));
}
setInterval(() => {
  if (!layout.hidden) refreshA2ATasks().catch(() => undefined);
}, FLEET_POLL_MS);

// The page shows itself and opens the event stream only with a session; without one, the sign-in form.
function start(): void {
  fetch('/watch/session', { headers: { accept: 'application/json' } })
    .then((res) => res.json() as Promise<{ signed_in: boolean }>)
    .then(
      async ({ signed_in }) => {
        setReachable(true);
        if (!signed_in) return signIn();
        if (await loadAll()) connect();
      },
      () => {
        setReachable(false);
        setTimeout(start, FLEET_POLL_MS); // the hub is not up yet: try again
      },
    );
}
start();

export {};
