// Body and query validation: every failure is a 422 whose detail names the field.
import type { z } from 'zod';
import { invalid } from './http-error.ts';

export function parseBody<T extends z.ZodType>(schema: T, body: unknown): z.infer<T> {
  const r = schema.safeParse(body ?? {});
  if (!r.success) {
    const issue = r.error.issues[0];
    const where = issue?.path.length ? issue.path.join('.') : 'body';
    throw invalid(`${where}: ${issue?.message ?? 'invalid'}`);
  }
  return r.data;
}

export function intParam(q: URLSearchParams, name: string, def: number, min: number, max: number): number {
  const raw = q.get(name);
  if (raw === null || raw === '') return def;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) throw invalid(`${name} must be an integer from ${min} to ${max}`);
  return n;
}

/** A number from `min` to `max`: every number a request brings is bounded, so arithmetic on it stays finite. */
export function numberParam(q: URLSearchParams, name: string, def: number, min: number, max: number): number {
  const raw = q.get(name);
  if (raw === null || raw === '') return def;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < min || n > max) throw invalid(`${name} must be a number from ${min} to ${max}`);
  return n;
}

/** `true/false`, `1/0`, `yes/no` in any case (Python clients send `True`). Absent means `def`. */
export function boolParam(q: URLSearchParams, name: string, def = false): boolean {
  const raw = q.get(name);
  if (raw === null || raw === '') return def;
  const v = raw.toLowerCase();
  if (v === 'true' || v === '1' || v === 'yes') return true;
  if (v === 'false' || v === '0' || v === 'no') return false;
  throw invalid(`${name} must be true or false`);
}

/** A comma-joined list (`a,b`), also accepted as repeated parameters (`x=a&x=b`). */
export function listParam(q: URLSearchParams, name: string): string[] {
  return q
    .getAll(name)
    .flatMap((v) => v.split(','))
    .map((v) => v.trim())
    .filter((v) => v !== '');
}

export function optionalParam(q: URLSearchParams, name: string): string | undefined {
  const raw = q.get(name);
  return raw === null || raw === '' ? undefined : raw;
}
