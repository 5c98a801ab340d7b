// Embeddings from an OpenAI-compatible `/v1/embeddings` endpoint (`memory.embeddings` in warren.yaml), for
// agents that recall by embedding_search. The answer is checked at the edge: a vector per input, numbers only.
import { z } from 'zod';

export interface Embedder {
  /** One vector per text, in order. */
  embed(texts: readonly string[], signal?: AbortSignal): Promise<number[][]>;
}

export class EmbeddingsError extends Error {
  override readonly name = 'EmbeddingsError';
  readonly status: number | undefined;
  constructor(message: string, status?: number, opts?: { cause?: unknown }) {
    super(message, opts);
    this.status = status;
  }
}

const EmbeddingsAnswer = z.looseObject({
  data: z.array(z.looseObject({ index: z.number().int().nonnegative().optional(), embedding: z.array(z.number()).min(1) })),
});

const TIMEOUT_MS = 30_000;

export class OpenAiEmbedder implements Embedder {
  readonly #url: string;
  readonly #model: string;
  readonly #apiKey: string | undefined;

  /** `apiBase` ends in /v1 (as for chat models); `apiKey` is the secret's value, never logged. */
  constructor(opts: { apiBase: string; model: string; apiKey?: string }) {
    this.#url = `${opts.apiBase.replace(/\/+$/, '')}/embeddings`;
    this.#model = opts.model;
    this.#apiKey = opts.apiKey;
  }

  async embed(texts: readonly string[], signal?: AbortSignal): Promise<number[][]> {
    if (texts.length === 0) return [];
    const timeout = AbortSignal.timeout(TIMEOUT_MS);
    const res = await fetch(this.#url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(this.#apiKey ? { authorization: `Bearer ${this.#apiKey}` } : {}) },
      body: JSON.stringify({ model: this.#model, input: texts }),
      signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
    }).catch((err: unknown) => {
      throw new EmbeddingsError(`embeddings endpoint unreachable: ${err instanceof Error ? err.message : String(err)}`, undefined, { cause: err });
    });
    if (!res.ok) throw new EmbeddingsError(`embeddings endpoint answered HTTP ${res.status}`, res.status);
    const parsed = EmbeddingsAnswer.safeParse(await res.json().catch(() => undefined));
    if (!parsed.success || parsed.data.data.length !== texts.length) throw new EmbeddingsError('embeddings endpoint sent no vector per input');
    const sorted = [...parsed.data.data].sort((a, b) => (a.index ?? 0) - (b.index ?? 0));
    return sorted.map((d) => d.embedding);
  }
}

/** The embedder `memory.embeddings` in warren.yaml names, its key read by name; undefined without the block. */
export function embedderOf(settings: { api_base: string; model: string; api_key_env?: string | undefined } | undefined, secret: (name: string) => string | undefined): Embedder | undefined {
  if (!settings) return undefined;
  return new OpenAiEmbedder({ apiBase: settings.api_base, model: settings.model, apiKey: settings.api_key_env ? secret(settings.api_key_env) : undefined });
}
