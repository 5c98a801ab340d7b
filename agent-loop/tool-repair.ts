// From what the model wrote to a call the runner may execute (docs/agent-loop.md R6). Cheapest repair first and
// all of it deterministic: tool name, JSON text (json-repair.ts), then scalar coercion where the schema asks
// for a number, integer or boolean. Finally Ajv validates against the exact schema object that was sent to
// the model; what still fails becomes an `invalid_arguments` result.
//
// Name repair, in order: exact; without a `functions.` prefix or surrounding blanks; the same name up to case
// and `-`/`_` (one candidate only). Then one edit (insert, delete, substitute, swap two neighbours), and only
// when it cannot pick the wrong tool: exactly one registered tool is one edit away, no other registered tool
// is one edit from that one (tool_b beside tool_c: a near miss of one may have meant the other), and neither
// name is a delegate (`delegate_to_*`): a guess must never call another agent. Anything else is unknown: an
// `unknown_tool` result the model sees, never a name echoed back to the provider.
import { createRequire } from 'node:module';
import type { Ajv, ValidateFunction } from 'ajv';
import { DELEGATE_TOOL_PREFIX } from './delegate-name.ts';
import { parseLenientJson } from './json-repair.ts';
import type { ToolCall } from './messages.ts';
import type { RawToolCall } from './tool-call-parser.ts';
import type { Tool, ToolRegistry } from './tools.ts';

export type PreparedCall =
  | { kind: 'ready'; call: ToolCall; tool: Tool; repairs: string[] }
  | { kind: 'invalid'; call: ToolCall; tool: Tool; message: string }
  /**
   * The name matches no registered tool, even after repair. `call` keeps the name as written, for the guards and
   * the events; it must never be echoed back to the provider (R6).
   */
  | { kind: 'unknown'; call: ToolCall; message: string };

let ajv: Ajv | undefined;
const compiled = new WeakMap<object, ValidateFunction>();

export function prepareCall(raw: RawToolCall, registry: ToolRegistry): PreparedCall {
  const repairs: string[] = [];
  const name = repairToolName(raw.name, registry.names());
  const parsed = parseArguments(raw.rawArguments);
  const rawText = typeof raw.rawArguments === 'string' ? raw.rawArguments : undefined;
  if (name === undefined) {
    // The message leaves the invented name out: repeating it to the model only reinforces it.
    const call: ToolCall = { id: raw.id, name: raw.name, arguments: parsed?.value ?? {}, ...(parsed ? {} : { rawArguments: rawText }) };
    return { kind: 'unknown', call, message: `call ${raw.id} named a tool that does not exist. Available tools: ${registry.definitions().map((d) => d.name).join(', ') || '(none)'}.` };
  }
  if (name !== raw.name) repairs.push('tool name');
  const tool = registry.get(name)!;
  if (parsed === undefined) {
    return { kind: 'invalid', call: { id: raw.id, name, arguments: {}, rawArguments: rawText }, tool, message: 'arguments are not a JSON object and could not be repaired' };
  }
  if (parsed.repaired) repairs.push('json');
  const schema = tool.definition.parameters;
  const { value: args, changed } = coerceToSchema(parsed.value, schema);
  if (changed) repairs.push('types');
  const call: ToolCall = { id: raw.id, name, arguments: args as Record<string, unknown> };
  const errors = validate(schema, args);
  if (errors) return { kind: 'invalid', call, tool, message: `invalid arguments for ${name}: ${errors}` };
  return { kind: 'ready', call, tool, repairs };
}

/** The registered name the model meant, or undefined (the rules are in the header). */
export function repairToolName(name: string, known: readonly string[]): string | undefined {
  if (known.includes(name)) return name;
  const bare = name.trim().replace(/^functions\./, '');
  if (known.includes(bare)) return bare;
  const written = normalName(bare);
  const same = known.filter((k) => normalName(k) === written);
  if (same.length) return same.length === 1 ? same[0] : undefined;
  if (isDelegateName(written)) return undefined;
  const near = known.filter((k) => withinOneEdit(normalName(k), written));
  if (near.length !== 1) return undefined;
  const target = near[0]!;
  if (isDelegateName(normalName(target))) return undefined;
  const crowded = known.some((k) => k !== target && withinOneEdit(normalName(k), normalName(target)));
  return crowded ? undefined : target;
}

/** Case and `-`/`_` are how models misspell names, never how two tools differ (a delegate's name maps `-` to `_`). */
function normalName(name: string): string {
  return name.toLowerCase().replace(/-/g, '_');
}

function isDelegateName(normal: string): boolean {
  return normal.startsWith(DELEGATE_TOOL_PREFIX);
}

export function withinOneEdit(a: string, b: string): boolean {
  if (Math.abs(a.length - b.length) > 1) return false;
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  if (a.length === b.length) return a.slice(i + 1) === b.slice(i + 1) || (a[i] === b[i + 1] && a[i + 1] === b[i] && a.slice(i + 2) === b.slice(i + 2));
  return a.length > b.length ? a.slice(i + 1) === b.slice(i) : a.slice(i) === b.slice(i + 1);
}

function parseArguments(raw: unknown, unwrapped = false): { value: Record<string, unknown>; repaired: boolean } | undefined {
  if (raw === undefined || raw === null || (typeof raw === 'string' && raw.trim() === '')) return { value: {}, repaired: false };
  if (typeof raw === 'string') {
    const p = parseLenientJson(raw);
    if (!p) return undefined;
    // Double-encoded arguments ("{\"q\":1}") are common; one more level is still deterministic. Only one: a bare
    // word repairs to a string of itself, so unbounded unwrapping recursed until the stack overflowed (~90 ms a call).
    if (typeof p.value === 'string') {
      if (unwrapped) return undefined;
      const inner = parseArguments(p.value, true);
      return inner && { value: inner.value, repaired: true };
    }
    return isRecord(p.value) ? { value: p.value, repaired: p.repaired } : undefined;
  }
  return isRecord(raw) ? { value: raw, repaired: false } : undefined;
}

/** "5" → 5 for integer/number, "true" → true for boolean, 5 → "5" for string; recursing into object properties. */
export function coerceToSchema(value: unknown, schema: unknown): { value: unknown; changed: boolean } {
  if (!isRecord(schema)) return { value, changed: false };
  const type = schema.type;
  if ((type === 'integer' || type === 'number') && typeof value === 'string' && value.trim() !== '' && Number.isFinite(Number(value))) {
    const n = Number(value);
    if (type === 'number' || Number.isInteger(n)) return { value: n, changed: true };
  }
  if (type === 'boolean' && (value === 'true' || value === 'false')) return { value: value === 'true', changed: true };
  if (type === 'string' && (typeof value === 'number' || typeof value === 'boolean')) return { value: String(value), changed: true };
  if (isRecord(value) && isRecord(schema.properties)) {
    let changed = false;
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      const r = coerceToSchema(v, schema.properties[k]);
      out[k] = r.value;
      changed ||= r.changed;
    }
    return { value: out, changed };
  }
  if (Array.isArray(value) && isRecord(schema.items)) {
    const items = value.map((v) => coerceToSchema(v, schema.items));
    return { value: items.map((r) => r.value), changed: items.some((r) => r.changed) };
  }
  return { value, changed: false };
}

/** Ajv errors as one line, or undefined when valid. The schema object is the one sent to the provider. */
export function validate(schema: Record<string, unknown>, value: unknown): string | undefined {
  let fn = compiled.get(schema);
  if (!fn) {
    fn = validator().compile(schema);
    compiled.set(schema, fn);
  }
  if (fn(value)) return undefined;
  return (fn.errors ?? []).map((e) => `${e.instancePath || '(root)'} ${e.message ?? 'is invalid'}`).join('; ');
}

/**
 * Ajv, loaded by the first call validated: a megabyte of heap for the daemon's life that an agent which only
 * writes text never needs. Required, not imported: validation is synchronous, and ajv is CommonJS.
 */
function validator(): Ajv {
  if (!ajv) {
    const { Ajv: AjvClass } = createRequire(import.meta.url)('ajv') as { Ajv: typeof Ajv };
    ajv = new AjvClass({ allErrors: true, strict: false });
  }
  return ajv;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
