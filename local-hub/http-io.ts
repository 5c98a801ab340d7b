// Reading request bodies (with a size cap) and writing JSON answers.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { HttpError } from './http-error.ts';
import { findTooDeep } from './json-depth.ts';

export function readBody(req: IncomingMessage, maxBytes: number): Promise<string> {
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > maxBytes) return Promise.reject(tooLarge(maxBytes));
  return new Promise((resolve, reject) => {
    let size = 0;
    let failed = false;
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => {
      if (failed) return; // Node discards the rest once the answer is sent
      size += c.length;
      if (size > maxBytes) {
        failed = true;
        reject(tooLarge(maxBytes));
      } else chunks.push(c);
    });
    req.on('end', () => {
      if (!failed) resolve(Buffer.concat(chunks).toString('utf8'));
    });
    req.on('error', reject);
  });
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
