// Reading request bodies (with a size cap) and writing JSON answers.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { HttpError } from './http-error.ts';
import { findTooDeep } from './json-depth.ts';

/**
 * The body, or `too_large` as soon as more than `max` bytes came: the rest is neither buffered nor torn down, so the
 * caller can still answer 413 (with `Connection: close`, then `req.resume()`) and the client sees the answer rather
 * than a reset. Every capped reader of warren's HTTP servers (hub, gateway, ingress) reads through this one.
 */
export function readCapped(req: IncomingMessage, max: number): Promise<Buffer | 'too_large'> {
  if (Number(req.headers['content-length'] ?? 0) > max) return Promise.resolve('too_large');
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (c: Buffer): void => {
      size += c.length;
      if (size > max) {
        req.off('data', onData);
        req.resume(); // what is left is read off and dropped
        resolve('too_large');
        return;
      }
      chunks.push(c);
    };
    req.on('data', onData);
    req.once('end', () => resolve(Buffer.concat(chunks)));
    req.once('error', reject);
  });
}

/** The body as text; an HttpError 413 past `maxBytes`. */
export async function readBody(req: IncomingMessage, maxBytes: number): Promise<string> {
  const body = await readCapped(req, maxBytes);
  if (body === 'too_large') throw tooLarge(maxBytes);
  return body.toString('utf8');
}

/** Empty means "no body"; anything else must be JSON nested no deeper than MAX_JSON_DEPTH (400 otherwise). */
export function parseJson(raw: string): unknown {
  if (raw.trim() === '') return undefined;
  const tooDeep = findTooDeep(raw);
  if (tooDeep) throw new HttpError(400, `${tooDeep.field}: nested deeper than ${tooDeep.max} levels`);
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    throw new HttpError(400, 'malformed JSON body');
  }
}

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  if (res.headersSent || res.destroyed) return;
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

function tooLarge(maxBytes: number): HttpError {
  return new HttpError(413, `request body larger than ${maxBytes} bytes`, { Connection: 'close' });
}
