// The keys a zod object schema accepts at a path, for "did you mean" hints on unknown keys.
import type { z } from 'zod';

interface Def {
  type: string;
  shape?: Record<string, z.ZodType>;
  innerType?: z.ZodType;
  in?: z.ZodType;
  element?: z.ZodType;
  options?: z.ZodType[];
}

function def(schema: z.ZodType): Def {
  return (schema as unknown as { _zod: { def: Def } })._zod.def;
}

/** Peels wrappers (default, optional, pipes…) until an object, array or union shows. */
function unwrap(schema: z.ZodType): z.ZodType[] {
  const d = def(schema);
  if (d.innerType) return unwrap(d.innerType);
  if (d.type === 'pipe' && d.in) return unwrap(d.in);
  if (d.type === 'union' && d.options) return d.options.flatMap(unwrap);
  return [schema];
}

export function knownKeysAt(schema: z.ZodType, path: readonly PropertyKey[]): string[] {
  let current = unwrap(schema);
  for (const seg of path) {
    const next: z.ZodType[] = [];
    for (const s of current) {
      const d = def(s);
      if (typeof seg === 'number' && d.type === 'array' && d.element) next.push(...unwrap(d.element));
      else if (typeof seg === 'string' && d.type === 'object' && d.shape?.[seg]) next.push(...unwrap(d.shape[seg]));
    }
    current = next;
  }
  return [...new Set(current.flatMap((s) => Object.keys(def(s).shape ?? {})))];
}
