// The `openai` SDK's HTTP client: a fetch on undici's kept-alive connection pools. The global fetch costs about
// twice the CPU per request (its spec-exact Request/Response machinery); the SDK only needs status, headers and a
// body, so requests go through undici's `request` and come back as a plain Response. What this does not handle
// (a Request object, a body that is not text or bytes) goes to the global fetch unchanged.
import { pipeline, type Readable } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import { Agent, request } from 'undici';
import type { FetchFn } from './cassette.ts';

// Timeouts are the SDK's (its own abort) and the stream watchdog's: undici's defaults would cut a long answer.
const dispatcher = new Agent({ headersTimeout: 0, bodyTimeout: 0, keepAliveTimeout: 30_000 });

/** Bodies up to this size (by their content-length) are read whole. */
const WHOLE_BODY_BYTES = 1024 * 1024;

/** Statuses whose responses have no body (a Response must not be given one). */
const NO_BODY = new Set([101, 103, 204, 205, 304]);

export const poolFetch: FetchFn = async (input, init) => {
  const body = init?.body;
  if (input instanceof Request || (body !== undefined && body !== null && typeof body !== 'string' && !(body instanceof Uint8Array))) return fetch(input, init);
  const method = (init?.method ?? 'GET').toUpperCase();
  const res = await request(input, { method, headers: plainHeaders(init?.headers), body: typeof body === 'string' ? ownBytes(body) : (body ?? undefined), signal: init?.signal ?? undefined, dispatcher });
  const headers = new Headers();
  for (const [name, value] of Object.entries(res.headers)) {
    if (Array.isArray(value)) for (const v of value) headers.append(name, v);
    else if (value !== undefined) headers.set(name, value);
  }
  if (NO_BODY.has(res.statusCode) || method === 'HEAD') {
    await res.body.dump();
    return new Response(null, { status: res.statusCode, headers });
  }
  const decoded = decode(res.body, headers.get('content-encoding'));
  if (decoded !== res.body) {
    headers.delete('content-encoding');
    headers.delete('content-length');
  }
  // An event stream is handed on as it arrives (streamed answers), and so is a large body or one of unknown length,
  // so its reader can stop at a bound (openai-model.ts); a small one is read whole, which is cheaper.
  const streamed = headers.get('content-type')?.includes('text/event-stream') ?? false;
  const length = Number(headers.get('content-length') ?? NaN);
  const small = decoded === res.body && Number.isFinite(length) && length <= WHOLE_BODY_BYTES;
  const payload = streamed || !small ? pulled(decoded) : await readAll(decoded);
  return new Response(payload, { status: res.statusCode, statusText: '', headers });
};

/**
 * The body as a web stream read on demand. Not `Readable.toWeb`: when the reader cancels early (the SDK drops an
 * error body it retries past; a bound stops an answer), the Node stream may still push data, and toWeb's enqueue
 * on the closed controller throws where nothing can catch it, an uncaught exception in the daemon.
 */
function pulled(body: Readable): ReadableStream<Uint8Array<ArrayBuffer>> {
  const chunks = body[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  let done = false;
  return new ReadableStream<Uint8Array<ArrayBuffer>>({
    async pull(controller) {
      try {
        const next = await chunks.next();
        if (done) return;
        if (next.done) {
          done = true;
          controller.close();
        } else {
          const b = next.value;
          controller.enqueue(new Uint8Array(b.buffer as ArrayBuffer, b.byteOffset, b.length));
        }
      } catch (err) {
        if (!done) {
          done = true;
          controller.error(err);
        }
      }
    },
    cancel() {
      done = true;
      body.destroy();
    },
  });
}

/**
 * A text body as bytes of its own. Given the string, undici encodes it with Buffer.from, a slice of Node's shared
 * 64 KB pool, kept until the answer is in: a model request lives for the model's whole latency, and a pool chunk
 * stays allocated while any slice of it is alive, however short-lived the other slices were (heap snapshots at
 * 1,000 requests in flight: 90 chunks, 5.6 MB, for 4.2 MB of bodies). Bodies under 1 KB stay on the pool.
 */
export function ownBytes(body: string): string | Buffer {
  if (body.length < OWN_BYTES_FROM) return body;
  const bytes = Buffer.allocUnsafeSlow(Buffer.byteLength(body));
  bytes.write(body);
  return bytes;
}

/** From this many characters a text body gets bytes of its own (ownBytes). */
const OWN_BYTES_FROM = 1024;

async function readAll(body: Readable): Promise<Uint8Array<ArrayBuffer>> {
  const chunks: Buffer[] = [];
  for await (const chunk of body) chunks.push(chunk as Buffer);
  const all = Buffer.concat(chunks);
  return new Uint8Array(all.buffer, all.byteOffset, all.length);
}

/** Undici's `request` does not decompress; the SDK asks for no encoding, but a server may send one anyway. */
function decode(body: Readable, encoding: string | null): Readable {
  switch (encoding?.trim().toLowerCase()) {
    case 'gzip':
    case 'x-gzip':
      return pipeline(body, createGunzip(), noop);
    case 'deflate':
      return pipeline(body, createInflate(), noop);
    case 'br':
      return pipeline(body, createBrotliDecompress(), noop);
    default:
      return body;
  }
}

// pipeline's callback: an error also destroys the last stream, and its reader sees it there.
const noop = (): void => undefined;

function plainHeaders(h: RequestInit['headers']): Record<string, string> {
  const out: Record<string, string> = {};
  if (!h) return out;
  if (h instanceof Headers) h.forEach((v, k) => (out[k] = v));
  else if (Array.isArray(h)) for (const [k, v] of h) out[k.toLowerCase()] = v!;
  else for (const [k, v] of Object.entries(h)) if (v !== undefined) out[k.toLowerCase()] = String(v);
  return out;
}
