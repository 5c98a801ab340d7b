// The agent card of a remote delegate (A2A, issue 29): fetched once and kept with its ETag, asked again only when
// older than maxAgeMs, and then conditionally (a 304 keeps the card). Checked with zod at the edge, so a page that
// is no agent card is a clear error naming the field, never a crash; an unreachable card keeps the last good one.
// The SDK's client (its card normaliser) is loaded by the first card read: a daemon whose agents have no remote
// delegate never loads it.
import type { AgentCard } from '@a2a-js/sdk';
import { z } from 'zod';

/** Where an agent's card lives below its base URL (A2A v1.0). */
export const AGENT_CARD_PATH = '.well-known/agent-card.json';
const DEFAULT_MAX_AGE_MS = 5 * 60_000;
const DEFAULT_TIMEOUT_MS = 10_000;
/** A card is a small JSON document; more is refused rather than read. */
const MAX_CARD_BYTES = 256 * 1024;

/** The card URL of `card_url`: a URL ending in `.json` is the card, anything else the agent's base URL. */
export function cardUrlOf(cardUrl: string): string {
  const url = new URL(cardUrl);
  if (url.pathname.endsWith('.json')) return url.href;
  if (!url.pathname.endsWith('/')) url.pathname += '/';
  return new URL(AGENT_CARD_PATH, url).href;
}

const InterfaceSchema = z.looseObject({ url: z.string().min(1), protocolBinding: z.string().min(1) });
const SkillSchema = z.looseObject({
  id: z.string(),
  name: z.string(),
  description: z.string().optional(),
  examples: z.array(z.string()).optional(),
});
/** What warren reads of a card; the rest is the SDK's. */
const CardSchema = z.looseObject({
  name: z.string().min(1),
  description: z.string().optional(),
  supportedInterfaces: z.array(InterfaceSchema).min(1, 'the card names no interface to reach the agent at'),
  capabilities: z.looseObject({ streaming: z.boolean().optional() }).optional(),
  skills: z.array(SkillSchema).optional(),
});

export interface CardSummary {
  name: string;
  description: string;
  streaming: boolean;
  skills: Array<{ name: string; description: string; examples: string[] }>;
}

export interface CachedCard {
  /** The card as the SDK's client takes it. */
  card: AgentCard;
  summary: CardSummary;
  url: string;
  etag?: string;
  fetchedAt: number;
}

/** The card could not be had: unreachable, refused, or not a card. */
export class AgentCardError extends Error {
  override readonly name = 'AgentCardError';
  readonly url: string;
  constructor(url: string, reason: string) {
    super(`agent card ${url}: ${reason}`);
    this.url = url;
  }
}

/** The card's JSON checked and normalised (v0.3 cards translated by the SDK), or why it is no card. */
export async function parseCard(url: string, json: unknown): Promise<{ card: AgentCard; summary: CardSummary }> {
  const { DefaultAgentCardResolver } = await import('@a2a-js/sdk/client');
  const normalised = new DefaultAgentCardResolver({ legacyCompat: { enabled: true } }).normalizeAgentCard(json);
  const parsed = CardSchema.safeParse(normalised);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new AgentCardError(url, `not an A2A agent card: ${issue.path.join('.') || '(top)'}: ${issue.message}`);
  }
  const c = parsed.data;
  return {
    card: normalised,
    summary: {
      name: c.name,
      description: c.description ?? '',
      streaming: c.capabilities?.streaming === true,
      skills: (c.skills ?? []).map((s) => ({ name: s.name || s.id, description: s.description ?? '', examples: s.examples ?? [] })),
    },
  };
}

export interface AgentCardCacheOptions {
  fetch?: typeof fetch;
  maxAgeMs?: number;
  timeoutMs?: number;
  now?: () => number;
}

/** One per process (the LLM executor's): every activation of every agent shares the cards. */
export class AgentCardCache {
  readonly #entries = new Map<string, CachedCard>();
  /** One fetch per URL at a time: a burst of activations asks once. */
  readonly #pending = new Map<string, Promise<CachedCard>>();
  readonly #fetch: typeof fetch;
  readonly #maxAgeMs: number;
  readonly #timeoutMs: number;
  readonly #now: () => number;

  constructor(opts: AgentCardCacheOptions = {}) {
    this.#fetch = opts.fetch ?? fetch;
    this.#maxAgeMs = opts.maxAgeMs ?? DEFAULT_MAX_AGE_MS;
    this.#timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.#now = opts.now ?? Date.now;
  }

  /** The card of `cardUrl` (as configured: the card or the agent's base URL); throws AgentCardError. */
  async get(cardUrl: string, signal?: AbortSignal): Promise<CachedCard> {
    const url = cardUrlOf(cardUrl);
    const cached = this.#entries.get(url);
    if (cached && this.#now() - cached.fetchedAt < this.#maxAgeMs) return cached;
    let pending = this.#pending.get(url);
    if (!pending) {
      pending = this.#load(url, cached, signal).finally(() => this.#pending.delete(url));
      this.#pending.set(url, pending);
    }
    return pending;
  }

  async #load(url: string, cached: CachedCard | undefined, signal: AbortSignal | undefined): Promise<CachedCard> {
    try {
      const fresh = await this.#request(url, cached, signal);
      this.#entries.set(url, fresh);
      return fresh;
    } catch (err) {
      // A card asked again that cannot be had now: the last good one still describes the agent.
      if (cached) return cached;
      throw err instanceof AgentCardError ? err : new AgentCardError(url, err instanceof Error ? err.message : String(err));
    }
  }

  async #request(url: string, cached: CachedCard | undefined, signal: AbortSignal | undefined): Promise<CachedCard> {
    const timeout = AbortSignal.timeout(this.#timeoutMs);
    const res = await this.#fetch(url, {
      // The explicit max-age=0: fetch would add `no-cache` to a conditional request, and servers such as express
      // then answer 200 whatever the ETag.
      headers: { accept: 'application/json', 'A2A-Version': '1.0', ...(cached?.etag ? { 'if-none-match': cached.etag, 'cache-control': 'max-age=0' } : {}) },
      signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
    }).catch((err: unknown) => {
      throw new AgentCardError(url, `unreachable (${timeout.aborted ? `no answer in ${this.#timeoutMs} ms` : causeOf(err)})`);
    });
    if (res.status === 304 && cached) {
      await res.body?.cancel();
      return { ...cached, fetchedAt: this.#now() };
    }
    if (!res.ok) {
      await res.body?.cancel();
      throw new AgentCardError(url, `HTTP ${res.status}`);
    }
    const text = await res.text();
    if (text.length > MAX_CARD_BYTES) throw new AgentCardError(url, `larger than ${MAX_CARD_BYTES} bytes`);
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw new AgentCardError(url, 'not JSON');
    }
    const etag = res.headers.get('etag') ?? undefined;
    return { ...(await parseCard(url, json)), url, fetchedAt: this.#now(), ...(etag ? { etag } : {}) };
  }
}

/** The network error under fetch's "fetch failed" (ECONNREFUSED and the like). */
function causeOf(err: unknown): string {
  const cause = err instanceof Error && err.cause instanceof Error ? err.cause : undefined;
  const code = cause && 'code' in cause ? String(cause.code) : undefined;
  return code ?? cause?.message ?? (err instanceof Error ? err.message : String(err));
}
