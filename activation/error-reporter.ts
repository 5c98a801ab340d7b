// Posts a final activation failure to m/agent-errors as the failing agent: one post per agent and error
// fingerprint an hour; a repeat within the hour is counted in a comment on that first post instead.
import type { Logger } from 'pino';
import type { HubAdapter } from '../hub-client/adapter.ts';
import type { AgentDefinition } from '../store/definition.ts';
import { ERRORS_COMMUNITY, formatErrorPost, type FailureReport } from './error-post.ts';
import type { ErrorPostLedger } from './error-post-ledger.ts';
import { errorFingerprint } from './failure-policy.ts';
import { errorPostKey, errorRepeatKey } from '../policy/idempotency-keys.ts';
import type { Redactor } from '../services/redact.ts';

export const ERROR_POST_WINDOW_MS = 3_600_000;

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

export type ReportResult = { posted: string } | { counted: number; on: string | undefined } | { skipped: 'disabled' | 'failed' };

export class ErrorReporter {
  readonly #hub: HubAdapter;
  readonly #redactor: Redactor;
  readonly #logger: Logger;
  readonly #ledger: ErrorPostLedger;
  readonly #windowMs: number;

  constructor(hub: HubAdapter, redactor: Redactor, logger: Logger, ledger: ErrorPostLedger, opts: { windowMs?: number } = {}) {
    this.#hub = hub;
    this.#redactor = redactor;
    this.#logger = logger;
    this.#ledger = ledger;
    this.#windowMs = opts.windowMs ?? ERROR_POST_WINDOW_MS;
  }

  async report(def: AgentDefinition | undefined, r: FailureReport): Promise<ReportResult> {
    if (def && !def.config.observability.post_errors) return { skipped: 'disabled' };
    // A public network (Moltbook) gets no error posts; the failure is in the logs and records.
    if (this.#hub.capabilities?.errorPosts === false) return { skipped: 'disabled' };
    // Redacted before fingerprinting, so no secret ends up in the ledger either.
    const fingerprint = errorFingerprint(r.stop ? r.stop.reason : r.error.name, this.#redactor.redact(r.stop ? `${r.stop.tool ?? ''}` : r.error.message));
    const claim = await this.#ledger.claim(r.agent, fingerprint, this.#windowMs);
    if (!claim.first) return this.#count(r, claim.count, claim.postId, claim.firstAt);
    const redactUserContent = def?.config.observability.redact_from_posts.includes('user_content') ?? true;
    const post = formatErrorPost(r, this.#redactor, { redactUserContent });
    let created;
    try {
      created = await this.#hub.createPost(
        { agent: r.agent, community: ERRORS_COMMUNITY, title: post.title, content: post.content },
        // Once per activation, however often the failure is reported (e.g. by a recovered worker).
        { idempotencyKey: errorPostKey(r.activationId) },
      );
    } catch (err) {
      // Not posted: the next occurrence posts instead of only counting.
      await this.#ledger.forget(r.agent, fingerprint).catch(() => undefined);
      this.#logger.warn({ agent: r.agent, err: this.#redactor.redact(errorText(err)) }, 'could not post the failure to m/agent-errors');
      return { skipped: 'failed' };
    }
    // Posted: a ledger that cannot remember it only costs repeats their counter comment, never a second post.
    await this.#ledger.remember(r.agent, fingerprint, created.id).catch((err: unknown) => this.#logger.warn({ agent: r.agent, err: this.#redactor.redact(errorText(err)) }, 'could not note the error post'));
    return { posted: created.id };
  }

  async #count(r: FailureReport, count: number, postId: string | undefined, firstAt: number): Promise<ReportResult> {
    this.#logger.info({ agent: r.agent, count, post: postId }, 'the same failure again: counted on the first error post');
    if (!postId) return { counted: count, on: undefined };
    const content = `This happened again: ${count} times in total since ${new Date(firstAt).toISOString().slice(0, 16).replace('T', ' ')}Z (latest: activation ${r.activationId}).`;
    try {
      await this.#hub.createComment({ agent: r.agent, postId, content: this.#redactor.redact(content) }, { idempotencyKey: errorRepeatKey(r.activationId) });
    } catch (err) {
      this.#logger.warn({ agent: r.agent, err: this.#redactor.redact(errorText(err)) }, 'could not count the repeated failure on its error post');
    }
    return { counted: count, on: postId };
  }
}
