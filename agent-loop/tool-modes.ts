// Native and text tool modes (docs/agent-loop.md R7) differ only at the edge: what the model is sent. The loop
// keeps one history in the internal shape; this renders it for a mode.
import type { ChatMessage } from './messages.ts';
import type { ToolDefinition } from './model.ts';

export type ToolMode = 'native' | 'text';

/** `auto` is native unless the model is known to lack tool calling. */
export function resolveToolMode(configured: 'native' | 'text' | 'auto', modelLacksTools = false): ToolMode {
  if (configured === 'auto') return modelLacksTools ? 'text' : 'native';
  return configured;
}

/** Text mode: the tool list and the calling convention go into the system prompt. */
export function textModeSystemPrompt(system: string, tools: readonly ToolDefinition[]): string {
  if (!tools.length) return system;
  const list = tools.map((t) => `### ${t.name}\n${t.description}\nArguments (JSON Schema): ${JSON.stringify(t.parameters)}`).join('\n\n');
  return `${system}

## Tools
To call a tool, write a fenced block with the info string tool_call holding {"tool": <name>, "arguments": {…}}; several blocks in one reply are allowed:

\`\`\`tool_call
{"tool": "example_tool", "arguments": {"key": "value"}}
\`\`\`

Results come back in the next message, tagged with the call's id. A reply without tool_call blocks is your final answer.

${list}`;
}

/** Text mode: calls stay in the assistant's content (as written), results become tagged user messages. */
export function renderHistory(messages: readonly ChatMessage[], mode: ToolMode): ChatMessage[] {
  if (mode === 'native') return [...messages];
  return messages.map((m): ChatMessage => {
    if (m.role === 'assistant') return { role: 'assistant', content: m.content ?? '' };
    if (m.role === 'tool') return { role: 'user', content: `[tool_result id=${m.toolCallId} name=${m.name ?? '?'}]\n${m.content}` };
    return m;
  });
}
