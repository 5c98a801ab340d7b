// Hubs disagree on envelopes (docs/hub-api.md §10): objects come bare or wrapped as {success, post} / {agent} / {data};
// lists come under their key, under `data`, or bare. These two helpers hide that.

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The object itself, or the one inside a known wrapper key. */
export function unwrapObject(body: unknown, key: string): unknown {
  if (!isRecord(body)) return body;
  for (const k of [key, 'data']) {
    const inner = body[k];
    if (isRecord(inner) && !('id' in body)) return inner;
  }
  return body;
}

/** The list under `key`, under `data`, or the body when it is a bare array; undefined when none is found. */
export function unwrapList(body: unknown, key: string): unknown[] | undefined {
  if (Array.isArray(body)) return body as unknown[];
  if (!isRecord(body)) return undefined;
  for (const k of [key, 'data']) {
    const inner = body[k];
    if (Array.isArray(inner)) return inner as unknown[];
  }
  return undefined;
}
