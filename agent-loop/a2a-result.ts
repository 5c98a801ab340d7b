// What a remote delegate's answer means to the model (pure): a finished task's artifacts are the result, a failed
// or refused one an error the model sees, a task that asks a question a result carrying the question and the ids
// a follow-up call continues it with. Also what the tool says of the remote agent, from its card.
import type { Artifact, Message, Part } from '@a2a-js/sdk';
import { delegateToolName } from './delegate-name.ts';
import type { CardSummary } from './a2a-card.ts';
import type { TerminationReason } from './termination.ts';

/** A2A task states by name (the SDK's TaskState numbers, A2A v1.0). */
export type RemoteState = 'submitted' | 'working' | 'completed' | 'failed' | 'canceled' | 'input_required' | 'rejected' | 'auth_required' | 'unknown';

const STATES: readonly RemoteState[] = ['unknown', 'submitted', 'working', 'completed', 'failed', 'canceled', 'input_required', 'rejected', 'auth_required'];

export function stateName(state: number | undefined): RemoteState {
  return STATES[state ?? 0] ?? 'unknown';
}

/** The task will not change again. */
export function isTerminal(state: RemoteState): boolean {
  return state === 'completed' || state === 'failed' || state === 'canceled' || state === 'rejected';
}

/** The task stopped to ask something: the call ends here, the task waits for the answer. */
export function isInterrupted(state: RemoteState): boolean {
  return state === 'input_required' || state === 'auth_required';
}

/** How a call ended, as the remote side left it. */
export type RemoteReply =
  | { kind: 'message'; text: string }
  | { kind: 'task'; taskId: string; contextId: string; state: RemoteState; statusText: string; artifactsText: string };

/** The readable text of parts: text as is, data as JSON, a file by its name and where it is. */
export function textOfParts(parts: readonly Part[] | undefined): string {
  return (parts ?? [])
    .map((p) => {
      const c = p.content;
      if (!c) return '';
      if (c.$case === 'text') return c.value;
      if (c.$case === 'data') return JSON.stringify(c.value);
      if (c.$case === 'url') return `[file ${p.filename || ''} ${p.mediaType || ''} at ${c.value}]`.replace(/ +/g, ' ');
      return `[file ${p.filename || '(unnamed)'}, ${p.mediaType || 'binary'}, ${c.value.length} bytes, not shown]`;
    })
    .filter((t) => t !== '')
    .join('\n');
}

export function textOfMessage(m: Message | undefined): string {
  return textOfParts(m?.parts);
}

export function textOfArtifacts(artifacts: readonly Artifact[]): string {
  return artifacts
    .map((a) => textOfParts(a.parts))
    .filter((t) => t !== '')
    .join('\n\n');
}

export interface RemoteToolResult {
  status: 'ok' | 'error';
  content: string;
  termination: TerminationReason;
}

/** The tool result of a remote delegation that came back (an answer, a failure, or a question). */
export function toolResultOf(delegate: string, reply: RemoteReply): RemoteToolResult {
  if (reply.kind === 'message') return { status: 'ok', content: reply.text || `(${delegate} answered with no text)`, termination: 'final' };
  const ids = `task_id "${reply.taskId}", context_id "${reply.contextId}"`;
  const said = reply.statusText ? `: ${reply.statusText}` : '';
  switch (reply.state) {
    case 'completed':
      return { status: 'ok', content: reply.artifactsText || reply.statusText || `(${delegate} completed the task with no text)`, termination: 'final' };
    case 'input_required':
      return {
        status: 'ok',
        content: `${delegate} needs more input before it can finish (${ids})${said}\nTo answer, call ${delegateToolName(delegate)} again with the answer as task and these task_id and context_id.`,
        termination: 'final',
      };
    case 'failed':
      return { status: 'error', content: `Delegation failed: ${delegate} failed the task${said}`, termination: 'error' };
    case 'rejected':
      return { status: 'error', content: `Delegation failed: ${delegate} rejected the task${said}`, termination: 'error' };
    case 'canceled':
      return { status: 'error', content: `Delegation failed: the task at ${delegate} was cancelled${said}`, termination: 'aborted' };
    case 'auth_required':
      return { status: 'error', content: `Delegation failed: ${delegate} asks for authentication warren cannot give (${ids})${said}`, termination: 'error' };
    default:
      return { status: 'error', content: `Delegation failed: ${delegate} left the task ${reply.state} (${ids})${said}`, termination: 'error' };
  }
}

const MAX_DESCRIPTION = 1_500;

/** The tool's description: the remote agent as its card presents it, with its skills; a line of its own without a card. */
export function remoteDescription(delegate: string, card: CardSummary | undefined): string {
  const head = `Ask the remote agent ${delegate} (over A2A) to do a task; its answer comes back as the result. If it asks a question, call again with your answer and the task_id and context_id it gave.`;
  if (!card) return `${head} (Its agent card could not be read yet: a call says why if it still cannot.)`;
  const about = [card.name !== delegate ? card.name : '', card.description].filter(Boolean).join(': ');
  const skills = card.skills.map((s) => `- ${s.name}${s.description ? `: ${s.description}` : ''}${s.examples.length ? ` (e.g. "${s.examples[0]}")` : ''}`);
  const text = [head, about && `It says of itself: ${about}`, skills.length ? `Its skills:\n${skills.join('\n')}` : ''].filter(Boolean).join('\n');
  return text.length <= MAX_DESCRIPTION ? text : `${text.slice(0, MAX_DESCRIPTION - 1)}…`;
}
