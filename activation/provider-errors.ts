// What a model provider's refusal means and what the operator does about it (pure): the common OpenAI-style errors
// (an unknown model, a bad key, an exhausted quota, a rate limit, a context too long, refused content) recognised by
// their HTTP status, their error code and their message, each with a cause and one next step. The error post
// (error-post.ts) shows them; the short line the agent leaves in the thread (failure-reply.ts) says which kind.

export type ProviderErrorKind = 'unknown_model' | 'bad_key' | 'quota_exhausted' | 'rate_limited' | 'context_too_long' | 'content_refused';

export interface ProviderErrorFacts {
  /** The HTTP status, when the caller knows it; otherwise read from the message (`model call failed (404): …`). */
  status?: number;
  /** The provider's error code (`model_not_found`, `invalid_api_key`, `insufficient_quota`, …), when known. */
  code?: string;
  message: string;
}

export interface ProviderError {
  kind: ProviderErrorKind;
  /** What happened, in one sentence. */
  cause: string;
  /** What the operator does next, in one sentence (`<agent>` filled in). */
  next: string;
  /** What the person who mentioned the agent reads in the thread: short, and nothing from the error itself. */
  reply: string;
}

const REFUSED = 'I could not answer: my model endpoint refused the request; the operator has been told.';

/** The status a ModelError's message carries (`model call failed (404): …`, or the SDK's own `404 The model …`). */
export function statusInMessage(message: string): number | undefined {
  const m = /model call failed \((\d{3})\)/.exec(message) ?? /^(\d{3})\b/.exec(message.trim()) ?? /\bHTTP (\d{3})\b/.exec(message);
  return m ? Number(m[1]) : undefined;
}

interface Rule {
  kind: ProviderErrorKind;
  matches: (status: number | undefined, code: string, text: string) => boolean;
  cause: string;
  next: (agent: string) => string;
  reply: string;
}

// In order: the first rule that matches wins (an exhausted quota is a 429 too, but no rate limit).
const RULES: readonly Rule[] = [
  {
    kind: 'quota_exhausted',
    matches: (s, code, t) => code === 'insufficient_quota' || /insufficient_quota|exceeded your current quota|credit balance is too low|billing/.test(t) || s === 402,
    cause: 'The model provider says the account\'s quota or credit is used up.',
    next: (a) => `Add credit or raise the spending limit in the provider's billing settings, then \`warren resume ${a}\` (retrying before that fails the same way).`,
    reply: REFUSED,
  },
  {
    kind: 'bad_key',
    matches: (s, code, t) => code === 'invalid_api_key' || s === 401 || /incorrect api key|invalid api key|invalid_api_key|invalid x-api-key/.test(t),
    cause: 'The model API key is missing, wrong or revoked.',
    next: (a) => `Put a valid key in the variable the agent's brain.api_key_env names (or its _FILE, or secrets.dir), restart the daemon, then \`warren resume ${a}\`.`,
    reply: REFUSED,
  },
  {
    kind: 'unknown_model',
    matches: (s, code, t) => code === 'model_not_found' || ((s === 404 || s === 400 || s === undefined) && /model\b.*\b(does not exist|not found|is not supported|unknown)|model_not_found|no such model|unknown model|invalid model/.test(t)),
    cause: 'The model endpoint does not know the model the agent asks for (brain.model), or this key may not use it.',
    next: (a) => `Fix brain.model in agents/${a}/config.yaml to a model the endpoint lists (GET <api_base>/models), then \`warren resume ${a}\`.`,
    reply: REFUSED,
  },
  {
    kind: 'context_too_long',
    matches: (_s, code, t) => code === 'context_length_exceeded' || /context_length_exceeded|maximum context length|context window|prompt is too long|too many tokens/.test(t),
    cause: 'The conversation sent to the model is longer than its context window.',
    next: (a) => `Lower workers.context_tokens, or give the model's window in executors.llm.context_windows so older turns are compacted in time; then \`warren resume ${a}\`.`,
    reply: 'I could not answer: this thread is longer than my model can read; the operator has been told.',
  },
  {
    kind: 'content_refused',
    matches: (_s, code, t) => code === 'content_filter' || code === 'content_policy_violation' || /content_filter|content_policy|content management policy|safety system|flagged as|refus(ed|al) to|usage polic/.test(t),
    cause: 'The model provider refused the request\'s content (its safety or content policy).',
    next: (a) => `Read the thread the notification points at: nothing to fix in warren if the refusal stands; the notification is given up on after workers.give_up_after failures, or \`warren resume ${a}\` tries it again now.`,
    reply: 'I could not answer: my model provider declined this request; the operator has been told.',
  },
  {
    kind: 'rate_limited',
    matches: (s, code, t) => s === 429 || code === 'rate_limit_exceeded' || /rate.?limit/.test(t),
    cause: 'The model provider is rate limiting this key.',
    next: (a) => `Nothing to do if it is rare: warren waits for the provider's reset. If it keeps happening, lower workers.concurrency or raise the provider's limit; \`warren resume ${a}\` ends the backoff now.`,
    reply: 'I could not answer yet: my model provider is busy; the operator has been told.',
  },
];

/** The provider error `facts` describe, or undefined when they are not one of the common kinds. */
export function classifyProviderError(facts: ProviderErrorFacts, agent: string): ProviderError | undefined {
  const text = facts.message.toLowerCase();
  const status = facts.status ?? statusInMessage(facts.message);
  const code = (facts.code ?? '').toLowerCase();
  const rule = RULES.find((r) => r.matches(status, code, text));
  return rule && { kind: rule.kind, cause: rule.cause, next: rule.next(agent), reply: rule.reply };
}
