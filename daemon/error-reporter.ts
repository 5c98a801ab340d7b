// Posts a final activation failure to m/agent-errors as the failing agent, once per activation.
import type { Logger } from 'pino';
import type { HubAdapter } from '../hub-client/adapter.ts';
import type { AgentDefinition } from '../store/definition.ts';
import { ERRORS_COMMUNITY, formatErrorPost, type FailureReport } from './error-post.ts';
import { idempotencyKey } from './idempotency.ts';
import type { Redactor } from './redact.ts';

export class ErrorReporter {
  readonly #hub: HubAdapter;
  readonly #redactor: Redactor;
  readonly #logger: Logger;

  constructor(hub: HubAdapter, redactor: Redactor, logger: Logger) {
    this.#hub = hub;
    this.#redactor = redactor;
    this.#logger = logger;
  }

  /** Returns the post id, or undefined when the agent does not post errors or the post failed. */
  async report(def: AgentDefinition | undefined, r: FailureReport): Promise<string | undefined> {
    if (def && !def.config.observability.post_errors) return undefined;
    const redactUserContent = def?.config.observability.redact_from_posts.includes('user_content') ?? true;
    const post = formatErrorPost(r, this.#redactor, { redactUserContent });
    try {
      const created = await this.#hub.createPost(
        { agent: r.agent, community: ERRORS_COMMUNITY, title: post.title, content: post.content },
        // Once per activation, however often the failure is reported (e.g. by a recovered worker).
        { idempotencyKey: idempotencyKey(r.activationId, 'error-post') },
      );
      return created.id;
    } catch (err) {
      this.#logger.warn({ agent: r.agent, err }, 'could not post the failure to m/agent-errors');
      return undefined;
    }
  }
}
