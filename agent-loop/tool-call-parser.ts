// Text mode (docs/agent-loop.md R7): tool calls written into the reply's content by models without native tool
// calling. A call is taken only from the formats the seeds define, and nothing else:
//
// - a fenced `tool_call` (or `tool_calls`) block holding `{"tool": name, "arguments": {…}}` or a `tool_calls`
//   object, and a fenced `delegate` block `{"agent", "task"}` (KAOS, seed 000), several per reply;
// - Forge's `<tool>{"server_name", "tool_name", "arguments"}</tool>` block outside any fence (seed 002);
// - a reply that *is* one JSON object `{"tool_calls": [{"name", "arguments"}]}` (seed 001), nothing around it.
//
// Inside these formats a call is a call whatever it names: an unknown name gets an `unknown_tool` result. Outside
// them nothing is, whatever tools it mentions: a call-shaped sample in a json or python fence, or prose naming
// `no_action`, is answer text (it once ended runs with a sample's result). Arguments stay raw here; repair and
// validation happen in tool-repair.ts, so both modes share one path.
import { delegateToolName } from './delegate-name.ts';
import { parseLenientJson } from './json-repair.ts';

/** A call as the model wrote it, before repair. `rawArguments` is a JSON string or an already parsed value. */
export interface RawToolCall {
  id: string;
  name: string;
  rawArguments: unknown;
}

type Call = Omit<RawToolCall, 'id'>;

/** A fenced block: where it starts and ends, its info string's first word and its body. */
interface Fence {
  at: number;
  end: number;
  info: string;
  body: string;
}

/**
 * Every fenced block (```info…\n body ```), as `/```[ \t]*([\w-]*)[^\n]*\r?\n([\s\S]*?)```/g` finds them, by
 * indexOf: that regex rescanned the rest of a line at every opener, seconds on a 64 KiB reply of openers.
 */
function fences(content: string): Fence[] {
  const out: Fence[] = [];
  for (let at = content.indexOf('```'); at !== -1; ) {
    const newline = content.indexOf('\n', at + 3);
    if (newline === -1) break; // no later opener has a line end either
    const close = content.indexOf('```', newline + 1);
    if (close === -1) break; // nor a closing fence
    const info = /^[ \t]*([\w-]*)/.exec(content.slice(at + 3, newline))?.[1] ?? '';
    out.push({ at, end: close + 3, info, body: content.slice(newline + 1, close) });
    at = content.indexOf('```', close + 3);
  }
  return out;
}
const FORGE_BLOCK = /<tool>([\s\S]*?)<\/tool>/g;
/** Forge's server name for the agent's own (built-in) tools. */
const FORGE_LOCAL = 'local';

/**
 * `nextId` yields ids unique within the activation (KAOS's `string_<tool>` collided on repeated tools);
 * `isTool` says whether a name is one of the activation's tools (it maps Forge's server and tool names).
 */
export function parseTextToolCalls(content: string, nextId: () => string, isTool: (name: string) => boolean): RawToolCall[] {
  const found: Array<{ at: number; calls: Call[] }> = [];
  const blocks = fences(content);
  for (const f of blocks) {
    if (f.info === 'tool_call' || f.info === 'tool_calls') found.push({ at: f.at, calls: firstCalls(f.body) });
    else if (f.info === 'delegate') found.push({ at: f.at, calls: delegationFrom(f.body) });
  }
  // A <tool> block quoted inside a fence (```xml, say) is a sample: fences are blanked before looking.
  const unfenced = blank(content, blocks);
  for (const m of unfenced.matchAll(FORGE_BLOCK)) found.push({ at: m.index, calls: forgeCall(m[1] ?? '', isTool) });
  const calls = found.sort((a, b) => a.at - b.at).flatMap((f) => f.calls);
  if (calls.length) return calls.map((c) => ({ ...c, id: nextId() }));
  return wholeReplyCalls(content).map((c) => ({ ...c, id: nextId() }));
}

/** `content` with each block's characters turned to spaces (offsets kept). */
function blank(content: string, blocks: readonly Fence[]): string {
  const parts: string[] = [];
  let from = 0;
  for (const b of blocks) {
    parts.push(content.slice(from, b.at), ' '.repeat(b.end - b.at));
    from = b.end;
  }
  parts.push(content.slice(from));
  return parts.join('');
}

/** Seed 001: the reply is one `{"tool_calls": […]}` object and nothing else (a cut-off end is repaired). */
function wholeReplyCalls(content: string): Call[] {
  const text = content.trim();
  if (!text.startsWith('{') || jsonObjects(text)[0] !== text) return [];
  const v = tryParse(text);
  return isRecord(v) && Array.isArray(v.tool_calls) ? v.tool_calls.flatMap(callsFromValue) : [];
}

/**
 * Seed 002: `server_name` "local" names a built-in; another server's tools are registered as `<server>__<tool>`
 * (mcp-tools.ts). A server that has no such tool but whose tool name is a built-in is taken as local, as Forge
 * runs unknown servers' calls against its own registry.
 */
function forgeCall(body: string, isTool: (name: string) => boolean): Call[] {
  const v = tryParse(jsonObjects(body)[0] ?? '');
  if (!isRecord(v) || typeof v.tool_name !== 'string') return callsFromValue(v);
  const rawArguments = v.arguments ?? {};
  const server = typeof v.server_name === 'string' ? v.server_name : FORGE_LOCAL;
  if (server === FORGE_LOCAL) return [{ name: v.tool_name, rawArguments }];
  const namespaced = `${server}__${v.tool_name}`;
  return [{ name: isTool(namespaced) || !isTool(v.tool_name) ? namespaced : v.tool_name, rawArguments }];
}

/** The calls of the first object in a block that holds some (a model may write a word before it). */
function firstCalls(text: string): Call[] {
  for (const candidate of jsonObjects(text)) {
    const calls = callsFromValue(tryParse(candidate));
    if (calls.length) return calls;
  }
  return [];
}

function delegationFrom(text: string): Call[] {
  const v = tryParse(jsonObjects(text)[0] ?? '');
  if (!isRecord(v) || typeof v.agent !== 'string') return [];
  return [{ name: delegateToolName(v.agent), rawArguments: { task: typeof v.task === 'string' ? v.task : '' } }];
}

function callsFromValue(v: unknown): Call[] {
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
function jsonObjects(text: string): string[] {
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
