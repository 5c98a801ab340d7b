// Recognising a model provider's refusal (activation/provider-errors.ts) and the line the agent leaves in the thread
// of a mention it could not answer (activation/failure-reply.ts), as tables: the facts in, the decision out.
import { describe, expect, it } from 'vitest';
import { failureReply, type FailureReplyFacts } from '../activation/failure-reply.ts';
import { classifyProviderError, statusInMessage, type ProviderErrorFacts, type ProviderErrorKind } from '../activation/provider-errors.ts';

describe('provider errors', () => {
  it.each<[string, ProviderErrorFacts, ProviderErrorKind | undefined]>([
    // [what, facts, kind] — messages as warren's ModelError words them (`model call failed (status): <SDK message>`).
    ['OpenAI: unknown model (404)', { message: "model call failed (404): 404 The model 'gpt-4o-mini-typo' does not exist or you do not have access to it." }, 'unknown_model'],
    ['unknown model by its code alone', { status: 400, code: 'model_not_found', message: 'model call failed (400): 400 bad request' }, 'unknown_model'],
    ['an OpenAI-compatible server: unknown model (400)', { message: 'model call failed (400): 400 invalid model ID' }, 'unknown_model'],
    ['bad key (401)', { message: 'model call failed (401): 401 Incorrect API key provided: sk-abc***.' }, 'bad_key'],
    ['bad key by its code', { code: 'invalid_api_key', message: 'refused' }, 'bad_key'],
    ['quota exhausted (429 insufficient_quota)', { message: 'model call failed (429): 429 You exceeded your current quota, please check your plan and billing details.' }, 'quota_exhausted'],
    ['quota exhausted by its code, though a 429', { status: 429, code: 'insufficient_quota', message: 'model call failed (429): 429 quota' }, 'quota_exhausted'],
    ['a rate limit is not an exhausted quota', { message: 'model call failed (429): 429 Rate limit reached for gpt-4o-mini in organization org-1 on requests per min (RPM)' }, 'rate_limited'],
    ['context too long (400 context_length_exceeded)', { message: "model call failed (400): 400 This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens." }, 'context_too_long'],
    ['context too long by its code', { status: 400, code: 'context_length_exceeded', message: 'model call failed (400): 400 too long' }, 'context_too_long'],
    ['content refused (400 content_filter)', { message: "model call failed (400): 400 The response was filtered due to the prompt triggering Azure OpenAI's content management policy." }, 'content_refused'],
    ['content refused by its code', { status: 400, code: 'content_policy_violation', message: 'model call failed (400): 400 rejected' }, 'content_refused'],
    ['a 500 is none of them', { message: 'model call failed (500): 500 internal error' }, undefined],
    ['a missing CLI is none of them', { message: 'spawn claude ENOENT' }, undefined],
    ['a plain 400 is none of them', { message: 'model call failed (400): 400 invalid tools[0].function.parameters' }, undefined],
  ])('%s', (_what, facts, kind) => {
    expect(classifyProviderError(facts, 'scout')?.kind).toBe(kind);
  });

  it('gives each kind a cause, a next step naming the agent, and a reply that quotes nothing of the error', () => {
    const e = classifyProviderError({ message: "model call failed (404): 404 The model 'gpt-4o-mini-typo' does not exist" }, 'scout')!;
    expect(e.cause).toMatch(/does not know the model/);
    expect(e.next).toContain('agents/scout/config.yaml');
    expect(e.next).toContain('`warren resume scout`');
    expect(e.reply).toBe('I could not answer: my model endpoint refused the request; the operator has been told.');
    expect(e.reply).not.toContain('gpt-4o-mini-typo');
  });

  it.each([
    ['model call failed (404): x', 404],
    ['429 Too Many Requests', 429],
    ['scripted model: HTTP 400', 400],
    ['no status here', undefined],
  ])('reads the status of %j', (message, status) => {
    expect(statusInMessage(message)).toBe(status);
  });
});

describe('the could-not-answer line', () => {
  const base: FailureReplyFacts = {
    agent: 'scout',
    enabled: true,
    hubTakesNotes: true,
    trigger: 'notification',
    task: { notificationId: 'n-1', postId: 'p-1', commentId: 'c-1' },
    post: 'error',
    errorName: 'ModelError',
    error: { message: "model call failed (404): 404 The model 'x' does not exist" },
  };
  const REFUSED = 'I could not answer: my model endpoint refused the request; the operator has been told.';

  it.each<[string, Partial<FailureReplyFacts>, string | undefined]>([
    // [what, facts changed from a failed mention, the line (undefined: none)]
    ['a provider refusal', {}, REFUSED],
    ['an error warren does not recognise', { error: { message: 'spawn claude ENOENT' } }, 'I could not answer: something went wrong on my side; the operator has been told.'],
    ['a loop guard stopped it', { post: 'guard' }, 'I could not answer: I stopped before finishing an answer; the operator has been told.'],
    ['a limit stopped it', { post: 'limit' }, 'I could not answer: I stopped before finishing an answer; the operator has been told.'],
    ['turned off (behavior.reply_on_failure: false)', { enabled: false }, undefined],
    ['Moltbook: a public hub that takes no notes (paced, capped, challenged)', { hubTakesNotes: false }, undefined],
    ['an exploration: nobody asked', { trigger: 'exploration' }, undefined],
    ['no thread to leave it in', { task: { notificationId: 'n-1' } }, undefined],
    ['the hub itself failed: no post, no line', { post: 'none' }, undefined],
    ['the agent\'s own write limits refused the answer', { errorName: 'WriteRefused' }, undefined],
  ])('%s', (_what, change, text) => {
    expect(failureReply({ ...base, ...change })?.text).toBe(text);
  });

  it('goes under the comment that mentioned the agent, keyed by the notification', () => {
    expect(failureReply(base)).toEqual({ notificationId: 'n-1', postId: 'p-1', parentId: 'c-1', text: REFUSED });
    expect(failureReply({ ...base, task: { notificationId: 'n-2', postId: 'p-1' } })?.parentId).toBeNull();
  });
});
