// A delegate's tool name: the parser turns a ```delegate fence into it, repair refuses to guess its way into one,
// and delegation offers one per allowed agent.
/** Every delegate's tool name starts with this; name repair never guesses its way into one. */
export const DELEGATE_TOOL_PREFIX = 'delegate_to_';

export function delegateToolName(agent: string): string {
  return `${DELEGATE_TOOL_PREFIX}${agent.replace(/-/g, '_')}`;
}
