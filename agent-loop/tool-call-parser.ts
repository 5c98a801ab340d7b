// Text mode (docs/agent-loop.md R7): tool calls written into the reply's content by models without native tool
// calling. A reply's calls come from its fenced `tool_call`/`tool_calls` (and `delegate`) blocks, several per
// reply, whatever they name: an unknown name there is still a call (an `unknown_tool` result). Without such a
// block, the first object (in a json/untagged fence, then in the prose) of the form `{"tool_calls": […]}`,
// `{"tool"|"name": …, "arguments": …}` or `{"function": {…}}` is taken only when every name in it is a
// registered tool, or one edit from exactly one (`isTool`, the repair rule): an answer that carries JSON data,
// `{"name": "Alice", "age": 3}`, is an answer. Arguments stay raw here; repair and validation happen in
// tool-repair.ts, so both modes share one path.
import { delegateToolName } from './delegate-name.ts';
import { parseLenientJson } from './json-repair.ts';

/** A call as the model wrote it, before repair. `rawArguments` is a JSON string or an already parsed value. */
export interface RawToolCall {
  id: string;
  name: string;
  rawArguments: unknown;
}

const FENCE = /```[ \t]*(tool_call|tool_calls|delegate|json)?[ \t]*\r?\n([\s\S]*?)```/g;

/**
 * `nextId` yields ids unique within the activation (KAOS's `string_<tool>` collided on repeated tools);
 * `isTool` says whether a name outside a tool_call block is one of the activation's tools.
 */
export function parseTextToolCalls(content: string, nextId: () => string, isTool: (name: string) => boolean): RawToolCall[] {
  const fenced = [...content.matchAll(FENCE)];
  // Tagged blocks in reply order; a `delegate` block {"agent", "task"} is a call of delegate_to_<agent>.
  const fromFences = fenced.flatMap((m) => (m[1] === 'tool_call' || m[1] === 'tool_calls' ? callsFromText(m[2] ?? '', () => true) : m[1] === 'delegate' ? delegationFrom(m[2] ?? '') : []));
  if (fromFences.length) return fromFences.map((c) => ({ ...c, id: nextId() }));
  // An untagged or json fence, or a raw object in the prose: a call only when it names the activation's tools.
  const named = (calls: ReadonlyArray<Omit<RawToolCall, 'id'>>): boolean => calls.every((c) => isTool(c.name));
  for (const m of fenced) {
    const calls = callsFromText(m[2] ?? '', named);
    if (calls.length) return calls.map((c) => ({ ...c, id: nextId() }));
  }
  return callsFromText(content, named).map((c) => ({ ...c, id: nextId() }));
}

/** The calls of the first object in `text` that holds some and that `accept` takes. */
function callsFromText(text: string, accept: (calls: ReadonlyArray<Omit<RawToolCall, 'id'>>) => boolean): Array<Omit<RawToolCall, 'id'>> {
  for (const candidate of jsonObjects(text)) {
    const v = tryParse(candidate);
    if (v === undefined) continue;
    const calls = callsFromValue(v);
    if (calls.length && accept(calls)) return calls;
  }
  return [];
}

function delegationFrom(text: string): Array<Omit<RawToolCall, 'id'>> {
  const v = tryParse(jsonObjects(text)[0] ?? '');
  if (!isRecord(v) || typeof v.agent !== 'string') return [];
  return [{ name: delegateToolName(v.agent), rawArguments: { task: typeof v.task === 'string' ? v.task : '' } }];
}

function callsFromValue(v: unknown): Array<Omit<RawToolCall, 'id'>> {
  if (Array.isArray(v)) return v.flatMap(callsFromValue);
  if (!isRecord(v)) return [];
  if (Array.isArray(v.tool_calls)) return v.tool_calls.flatMap(callsFromValue);
  // {"tool": name, "arguments": {…}} and the OpenAI-ish {"name", "arguments"} / {"function": {…}}.
  if (isRecord(v.function)) return callsFromValue(v.function);
  const name = typeof v.tool === 'string' ? v.tool : typeof v.name === 'string' ? v.name : undefined;
  if (!name) return [];
  return [{ name, rawArguments: v.arguments ?? v.args ?? v.parameters ?? {} }];
}

/** Balanced `{…}` spans, outermost first, skipping braces inside strings. */
export function jsonObjects(text: string): string[] {
  const out: string[] = [];
  for (let start = text.indexOf('{'); start !== -1; ) {
    const end = matchingBrace(text, start);
    // A reply cut off mid-object: offer the rest, the lenient parser may close it.
    if (end === -1) {
      out.push(text.slice(start));
      break;
    }
    out.push(text.slice(start, end + 1));
    start = text.indexOf('{', end + 1);
  }
  return out;
}

function matchingBrace(text: string, start: number): number {
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const ch = text[i];
    if (inString) {
      if (ch === '\\') i++;
      else if (ch === '"') inString = false;
    } else if (ch === '"') inString = true;
    else if (ch === '{') depth++;
    else if (ch === '}' && --depth === 0) return i;
  }
  return -1;
}

function tryParse(s: string): unknown {
  return parseLenientJson(s)?.value;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
