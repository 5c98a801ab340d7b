// The pure parts of remote delegation: what a remote task's ending means to the model, where a card lives, what
// a card must hold, and how the tool describes the remote agent.
import { describe, expect, it } from 'vitest';
import { AgentCardError, cardUrlOf, parseCard } from '../agent-loop/a2a-card.ts';
import { isInterrupted, isTerminal, remoteDescription, stateName, textOfParts, toolResultOf, type RemoteReply, type RemoteState } from '../agent-loop/a2a-result.ts';

const task = (state: RemoteState, statusText = '', artifactsText = ''): RemoteReply => ({ kind: 'task', taskId: 't-1', contextId: 'c-1', state, statusText, artifactsText });

describe('a remote task as the model sees it', () => {
  it.each<[string, RemoteReply, { status: 'ok' | 'error'; content: string; termination: string }]>([
    ['a message', { kind: 'message', text: 'hi' }, { status: 'ok', content: 'hi', termination: 'final' }],
    ['COMPLETED: its artifacts', task('completed', 'done', 'the answer'), { status: 'ok', content: 'the answer', termination: 'final' }],
    ['COMPLETED without artifacts: its status text', task('completed', 'done'), { status: 'ok', content: 'done', termination: 'final' }],
    ['FAILED', task('failed', 'out of paper'), { status: 'error', content: 'Delegation failed: echo failed the task: out of paper', termination: 'error' }],
    ['REJECTED', task('rejected', 'not my job'), { status: 'error', content: 'Delegation failed: echo rejected the task: not my job', termination: 'error' }],
    ['CANCELED', task('canceled'), { status: 'error', content: 'Delegation failed: the task at echo was cancelled', termination: 'aborted' }],
    ['AUTH_REQUIRED', task('auth_required', 'log in'), { status: 'error', content: 'Delegation failed: echo asks for authentication warren cannot give (task_id "t-1", context_id "c-1"): log in', termination: 'error' }],
    [
      'INPUT_REQUIRED: the question and the ids to continue with',
      task('input_required', 'Which city?'),
      { status: 'ok', content: 'echo needs more input before it can finish (task_id "t-1", context_id "c-1"): Which city?\nTo answer, call delegate_to_echo again with the answer as task and these task_id and context_id.', termination: 'final' },
    ],
  ])('%s', (_what, reply, expected) => {
    expect(toolResultOf('echo', reply)).toEqual(expected);
  });

  it('states by name; which are terminal and which interrupt', () => {
    expect([0, 1, 2, 3, 4, 5, 6, 7, 8, 99, undefined].map(stateName)).toEqual(['unknown', 'submitted', 'working', 'completed', 'failed', 'canceled', 'input_required', 'rejected', 'auth_required', 'unknown', 'unknown']);
    expect((['completed', 'failed', 'canceled', 'rejected', 'working', 'input_required'] as const).map(isTerminal)).toEqual([true, true, true, true, false, false]);
    expect((['input_required', 'auth_required', 'working', 'completed'] as const).map(isInterrupted)).toEqual([true, true, false, false]);
  });

  it('parts as text: text as is, data as JSON, files by name', () => {
    const part = (content: NonNullable<Parameters<typeof textOfParts>[0]>[number]['content'], filename = '', mediaType = '') => ({ content, metadata: undefined, filename, mediaType });
    expect(textOfParts([part({ $case: 'text', value: 'a' }), part({ $case: 'data', value: { n: 1 } }), part({ $case: 'url', value: 'http://x/f.pdf' }, 'f.pdf', 'application/pdf'), part({ $case: 'raw', value: Buffer.from('abc') }, 'b.bin')])).toBe(
      'a\n{"n":1}\n[file f.pdf application/pdf at http://x/f.pdf]\n[file b.bin, binary, 3 bytes, not shown]',
    );
  });
});

describe('agent cards', () => {
  it.each([
    ['http://h:1/a2a/echo/', 'http://h:1/a2a/echo/.well-known/agent-card.json'],
    ['http://h:1/a2a/echo', 'http://h:1/a2a/echo/.well-known/agent-card.json'],
    ['http://h:1', 'http://h:1/.well-known/agent-card.json'],
    ['https://h/cards/echo.json', 'https://h/cards/echo.json'],
  ])('card_url %s is read at %s', (given, url) => {
    expect(cardUrlOf(given)).toBe(url);
  });

  it('a page that is no card is an AgentCardError naming the field', async () => {
    await expect(parseCard('http://x/c.json', { name: 'x' })).rejects.toThrow(new AgentCardError('http://x/c.json', 'not an A2A agent card: supportedInterfaces: Invalid input: expected array, received undefined'));
    await expect(parseCard('http://x/c.json', { name: 'x', supportedInterfaces: [] })).rejects.toThrow(/supportedInterfaces: the card names no interface/);
    const ok = await parseCard('http://x/c.json', { name: 'Echo', supportedInterfaces: [{ url: 'http://x/', protocolBinding: 'JSONRPC' }], capabilities: { streaming: true }, skills: [{ id: 's', name: '' }] });
    expect(ok.summary).toEqual({ name: 'Echo', description: '', streaming: true, skills: [{ name: 's', description: '', examples: [] }] });
  });

  it('the description: the card, its skills, bounded; a plainer one without a card', () => {
    expect(remoteDescription('echo', undefined)).toContain('could not be read yet');
    const many = Array.from({ length: 100 }, (_, i) => ({ name: `skill ${i}`, description: 'does a thing '.repeat(5), examples: [] }));
    const d = remoteDescription('echo', { name: 'Echo', description: 'Says things back.', streaming: false, skills: many });
    expect(d).toContain('It says of itself: Echo: Says things back.');
    expect(d.length).toBe(1500);
    expect(d.endsWith('…')).toBe(true);
  });
});
