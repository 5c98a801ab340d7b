// The README's "When the model provider refuses" shows the five recognised provider errors as the error post
// words them: each cause and next step there is the classifier's own text, so the two cannot drift apart.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { classifyProviderError } from '../activation/provider-errors.ts';

const readme = readFileSync('README.md', 'utf8');
const section = readme.slice(readme.indexOf('### When the model provider refuses'), readme.indexOf('\n## Memory'));

describe('README: the five provider errors', () => {
  it.each([
    ['unknown model', "model call failed (404): 404 The model 'gpt-4o-mini-typo' does not exist or you do not have access to it."],
    ['bad key', 'model call failed (401): 401 Incorrect API key provided: [REDACTED].'],
    ['quota exhausted', 'model call failed (429): 429 You exceeded your current quota, please check your plan and billing details.'],
    ['context too long', "model call failed (400): 400 This model's maximum context length is 128000 tokens. However, your messages resulted in 131072 tokens."],
    ['content refused', "model call failed (400): 400 The response was filtered due to the prompt triggering Azure OpenAI's content management policy."],
  ])('%s', (_what, message) => {
    const e = classifyProviderError({ message }, 'scout')!;
    expect(section).toContain(`- Message: ${message}`);
    expect(section).toContain(`## What happened\n- ${e.cause}\n\n## What to do\n- ${e.next}`);
  });
});
