import { describe, expect, it } from 'vitest';
import { formatErrorPost, possibleCauses } from '../activation/error-post.ts';
import { parseExplorationAnswer } from '../activation/exploration-answer.ts';
import { REDACTED, Redactor, secretsFromEnv } from '../services/redact.ts';

const CANARY = 'canary-secret-4f9c2b7e1d';

describe('redaction', () => {
  it('hides known secret values wherever they appear, longest first', () => {
    const r = new Redactor([CANARY, `${CANARY}-longer`, 'short']);
    expect(r.redact(`a ${CANARY}-longer b ${CANARY} c short`)).toBe(`a ${REDACTED} b ${REDACTED} c short`);
  });

  it.each([
    ['sk-proj-abcdefghijklmnop1234', REDACTED],
    ['sk-ant-api03-abcdefghijklmnopqrst', REDACTED],
    [`botburrow_agent_${'ab'.repeat(32)}`, REDACTED],
    ['AKIAABCDEFGHIJKLMNOP', REDACTED],
    ['Authorization: Bearer abc.def.ghi-123', `Authorization: Bearer ${REDACTED}`],
    ['api_key=hunter2hunter2', `api_key=${REDACTED}`],
    ['{"password": "correct horse battery"}', `{"password": "${REDACTED}"}`], // still JSON
    ["token: 'abc def ghi'", `token: '${REDACTED}'`],
  ])('catches the shape of %s without knowing it', (input, expected) => {
    expect(new Redactor([]).redact(input)).toBe(expected);
  });

  it('leaves ordinary text alone', () => {
    const text = 'The model answered 429 after 3 attempts; see the activation record.';
    expect(new Redactor([]).redact(text)).toBe(text);
  });

  it('collects secrets from variables whose names say so, plus extras', () => {
    const env = { OPENAI_API_KEY: 'k1-xxxxxxxx', HOME: '/home/x', GITHUB_TOKEN: 't1-xxxxxxxx', DB_PASSWORD: 'p1-xxxxxxxx' };
    expect(secretsFromEnv(env, ['hub-admin-xxxx', undefined]).sort()).toEqual(['hub-admin-xxxx', 'k1-xxxxxxxx', 'p1-xxxxxxxx', 't1-xxxxxxxx']);
  });
});

describe('error post', () => {
  const report = {
    agent: 'greeter',
    activationId: 'act-7-abc',
    trigger: 'notification' as const,
    task: { notificationId: 'n-1', postId: 'p-1', from: 'dana', excerpt: 'please review\nmy private notes' },
    error: { name: 'ModelError', message: `401 Unauthorized: invalid api key ${CANARY}`, stack: `ModelError: 401\n    at call (model.ts:1:1)\n    at run (loop.ts:2:2)` },
    executor: 'llm',
    model: 'gpt-4o-mini',
    attempts: 1,
    maxAttempts: 3,
    retryable: false,
  };

  it('follows the hub layout: task, error, context, stack, what was tried, what happened and what to do, the wait', () => {
    const post = formatErrorPost(report, new Redactor([CANARY]), { redactUserContent: true });
    expect(post.title).toBe('🔴 Activation Failed: greeter');
    const headings = post.content.split('\n').filter((l) => l.startsWith('## '));
    // A 401 is a recognised provider error (activation/provider-errors.ts): its cause and next step, not guesses.
    expect(headings).toEqual(['## Task', '## Error', '## Context', '## Stack trace', '## What I tried', '## What happened', '## What to do', '## Waiting']);
    expect(post.content).toContain('- Kind: notification n-1');
    expect(post.content).toContain('- Class: ModelError');
    expect(post.content).toContain('- Model: gpt-4o-mini');
    expect(post.content).toContain('1 of 3 attempts; not retryable, so not retried');
    expect(post.content).toContain('The model API key is missing, wrong or revoked.');
    expect(post.content).toContain('at call (model.ts:1:1)');
  });

  it('never carries the secret, and user content only when allowed', () => {
    const hidden = formatErrorPost(report, new Redactor([CANARY]), { redactUserContent: true });
    expect(JSON.stringify(hidden)).not.toContain(CANARY);
    expect(hidden.content).not.toContain('private notes');
    expect(hidden.content).toContain('[redacted: user_content]');
    const shown = formatErrorPost(report, new Redactor([CANARY]), { redactUserContent: false });
    expect(shown.content).toContain('- Content: please review my private notes');
    expect(JSON.stringify(shown)).not.toContain(CANARY);
  });

  it('an error it does not recognise keeps the possible causes', () => {
    const post = formatErrorPost({ ...report, error: { name: 'Error', message: 'spawn claude ENOENT' } }, new Redactor([]), { redactUserContent: true });
    expect(post.content).toContain('## Possible causes\n- A command or file the executor needs is missing on this machine.');
    expect(post.content).not.toContain('## What to do');
  });

  it('says until when the agent waits, how many mentions wait, and that `warren resume` ends the wait', () => {
    const post = formatErrorPost({ ...report, hold: { backoffUntil: Date.parse('2026-11-23T07:23:00Z'), failures: 1, waiting: 2 } }, new Redactor([]), { redactUserContent: true });
    expect(post.content).toContain('## Waiting\n- Backoff until 2026-11-23 07:23Z (1 failure in a row); the agent runs nothing before then.\n- Mentions waiting: 2 unread notifications; they run after the backoff.\n- Once the cause is fixed, `warren resume greeter` ends the backoff now; `warren status` shows the wait.');
    // A guard stop's short post says the same.
    const stop = formatErrorPost({ ...report, stop: { kind: 'guard', reason: 'loop_detected', message: 'same call 3 times' }, hold: { waiting: 1 } }, new Redactor([]), { redactUserContent: true });
    expect(stop.content).toContain('- Mentions waiting: 1 unread notification;');
    expect(stop.content).toContain('`warren resume greeter`');
  });

  it('names likely causes by what the error says', () => {
    expect(possibleCauses('HTTP 429 Too Many Requests')).toEqual(['The model provider is rate limiting this key.']);
    expect(possibleCauses('connect ECONNREFUSED 127.0.0.1:9')[0]).toMatch(/network connection failed/);
    expect(possibleCauses("the CLI's output passed behavior.limits.max_cli_output_bytes (4194304 bytes)")).toEqual([expect.stringMatching(/larger than behavior\.limits allows/) as string]);
    expect(possibleCauses('something odd')[0]).toMatch(/warren logs --agent/);
  });
});

describe('exploration answers', () => {
  const offered = new Set(['p-1', 'p-2']);
  it.each([
    ['REPLY TO p-1\nNice find!', { kind: 'reply', postId: 'p-1', content: 'Nice find!' }],
    ['**REPLY TO: `p-2`**\n\nTwo\nlines', { kind: 'reply', postId: 'p-2', content: 'Two\nlines' }],
    ['reply to post p-1\nlower case works', { kind: 'reply', postId: 'p-1', content: 'lower case works' }],
  ])('posts %j', (text, expected) => {
    expect(parseExplorationAnswer(text, offered)).toEqual(expected);
  });

  it.each([
    ['NO_ACTION', 'no action'],
    ['', 'no action'],
    ['I think p-1 is great', 'the answer does not start with REPLY TO <post id>'],
    ['REPLY TO p-9\nhello', 'post p-9 was not in the feed'],
    ['REPLY TO p-1\n   ', 'empty reply'],
  ])('posts nothing for %j', (text, why) => {
    expect(parseExplorationAnswer(text, offered)).toEqual({ kind: 'none', why });
  });
});
