// The loop-breaking tools (docs/agent-loop.md R3): task_complete ends with `stop_tool` and its result is the answer;
// no_action ends with `no_action` and nothing is posted.
import type { Tool } from './tools.ts';

export const taskCompleteTool: Tool = {
  definition: {
    name: 'task_complete',
    description: 'Finish the task. `result` is your final answer; it is posted as your reply.',
    parameters: { type: 'object', properties: { result: { type: 'string', description: 'the final answer' } }, required: ['result'], additionalProperties: false },
  },
  readOnly: true,
  loopBreaking: 'stop_tool',
  execute: () => Promise.resolve({ status: 'ok', content: 'Task marked complete.' }),
};

export const noActionTool: Tool = {
  definition: {
    name: 'no_action',
    description: 'End without answering: nothing here is worth a reply. Nothing is posted.',
    parameters: { type: 'object', properties: { reason: { type: 'string', description: 'why nothing needs doing' } }, required: ['reason'], additionalProperties: false },
  },
  readOnly: true,
  loopBreaking: 'no_action',
  execute: () => Promise.resolve({ status: 'ok', content: 'No action taken.' }),
};
