// Record-and-replay of a model's HTTP traffic (docs/agent-loop.md R15): a run against a real endpoint is recorded
// as request and response bodies; replaying answers from the recording, offline, and checks that every
// request is byte-identical to the recorded one. A replay that diverges is answered with a 400 naming the
// first difference, so the run ends with a visible error instead of a silent guess.
import { readFile, writeFile } from 'node:fs/promises';
import { z } from 'zod';

const EntrySchema = z.object({
  request: z.object({ method: z.string(), path: z.string(), body: z.string() }),
  /** `network_error`: the request never got an answer (refused, reset); replayed as the same failure. */
  response: z.object({ status: z.number().int(), headers: z.record(z.string(), z.string()), body: z.string(), network_error: z.string().optional() }),
});
const CassetteSchema = z.object({ version: z.literal(1), entries: z.array(EntrySchema) });

export type CassetteEntry = z.infer<typeof EntrySchema>;
export type Cassette = z.infer<typeof CassetteSchema>;
export type FetchFn = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

/** Response headers worth keeping: how to read the body, and what retries look at. */
const KEPT_HEADERS = ['content-type', 'retry-after', 'retry-after-ms', 'x-request-id'];

export function emptyCassette(): Cassette {
  return { version: 1, entries: [] };
}

export async function readCassette(file: string): Promise<Cassette> {
  const parsed = CassetteSchema.safeParse(JSON.parse(await readFile(file, 'utf8')));
  if (!parsed.success) throw new Error(`${file}: not a warren cassette: ${parsed.error.issues[0]?.path.join('.') ?? ''} ${parsed.error.issues[0]?.message ?? ''}`);
  return parsed.data;
}

export async function writeCassette(file: string, cassette: Cassette): Promise<void> {
  await writeFile(file, `${JSON.stringify(cassette, null, 1)}\n`, { mode: 0o600 });
}

async function requestOf(input: string | URL | Request, init: RequestInit | undefined): Promise<CassetteEntry['request']> {
  const req = new Request(input, init);
  return { method: req.method, path: new URL(req.url).pathname, body: req.body ? await req.text() : '' };
}

/**
 * A fetch that passes through and appends each exchange (whole bodies; SSE streams are kept as text). The
 * caller still reads the response as it arrives: the body is copied on its way, not read ahead.
 */
export function recordingFetch(cassette: Cassette, inner: FetchFn = fetch): FetchFn {
  return async (input, init) => {
    const request = await requestOf(input, init);
    let res: Response;
    try {
      res = await inner(input, init);
    } catch (err) {
      // Kept, so a replay retries where the recorded run retried and its ledger comes out the same.
      if (!init?.signal?.aborted) cassette.entries.push({ request, response: { status: 0, headers: {}, body: '', network_error: err instanceof Error ? err.message : String(err) } });
      throw err;
    }
    const headers: Record<string, string> = {};
    for (const name of KEPT_HEADERS) {
      const v = res.headers.get(name);
      if (v !== null) headers[name] = v;
    }
    // In request order, whenever each body ends; an exchange cut off midway keeps what arrived.
    const entry: CassetteEntry = { request, response: { status: res.status, headers, body: '' } };
    cassette.entries.push(entry);
    if (!res.body) return new Response(null, { status: res.status, headers });
    const decoder = new TextDecoder();
    const copy = new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        entry.response.body += decoder.decode(chunk, { stream: true });
        controller.enqueue(chunk);
      },
      flush() {
        entry.response.body += decoder.decode();
      },
    });
    return new Response(res.body.pipeThrough(copy), { status: res.status, headers });
  };
}

export interface Replayer {
  fetch: FetchFn;
  /** Requests that differed from the recording (empty after a faithful replay). */
  mismatches: string[];
  /** Recorded exchanges not asked for (yet). */
  remaining(): number;
}

/** Answers each request with the next recorded response, after checking the request is the recorded one. */
export function replayingFetch(cassette: Cassette): Replayer {
  let next = 0;
  const mismatches: string[] = [];
  const fetchFn: FetchFn = async (input, init) => {
    const request = await requestOf(input, init);
    const n = next++;
    const entry = cassette.entries[n];
    const problem = entry ? differenceOf(entry.request, request) : `request ${n + 1} was never recorded (the cassette has ${cassette.entries.length})`;
    if (problem || !entry) {
      const message = `cassette mismatch at request ${n + 1}: ${problem ?? ''}`;
      mismatches.push(message);
      return new Response(JSON.stringify({ error: { message, type: 'invalid_request_error', code: 'cassette_mismatch' } }), { status: 400, headers: { 'content-type': 'application/json' } });
    }
    if (entry.response.network_error !== undefined) throw new TypeError('fetch failed', { cause: new Error(entry.response.network_error) });
    return new Response(entry.response.body, { status: entry.response.status, headers: entry.response.headers });
  };
  return { fetch: fetchFn, mismatches, remaining: () => cassette.entries.length - next };
}

/** The first difference between a recorded and an actual request, or undefined when they are identical. */
export function differenceOf(recorded: CassetteEntry['request'], actual: CassetteEntry['request']): string | undefined {
  if (recorded.method !== actual.method || recorded.path !== actual.path) return `${actual.method} ${actual.path} instead of ${recorded.method} ${recorded.path}`;
  if (recorded.body === actual.body) return undefined;
  let i = 0;
  while (i < recorded.body.length && recorded.body[i] === actual.body[i]) i++;
  const around = (s: string): string => JSON.stringify(s.slice(Math.max(0, i - 40), i + 40));
  return `the body differs at character ${i}: recorded …${around(recorded.body)}…, sent …${around(actual.body)}…`;
}
