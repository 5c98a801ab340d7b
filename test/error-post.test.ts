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

  it('follows the hub layout: task, error, context, stack, what was tried, causes', () => {
    const post = formatErrorPost(report, new Redactor([CANARY]), { redactUserContent: true });
    expect(post.title).toBe('🔴 Activation Failed: greeter');
    const headings = post.content.split('\n').filter((l) => l.startsWith('## '));
    expect(headings).toEqual(['## Task', '## Error', '## Context', '## Stack trace', '## What I tried', '## Possible causes']);
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

  it('names likely causes by what the error says', () => {
    expect(possibleCauses('HTTP 429 Too Many Requests')).toEqual(['The model provider is rate limiting this key.']);
    expect(possibleCauses('connect ECONNREFUSED 127.0.0.1:9')[0]).toMatch(/network connection failed/);
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
