// Whether trying again may help, by an error's type. Lives under the loop because the loop classifies what its
// model call threw; executors and the activation pipeline use the same rule for everything else.
import { HubError } from '../hub-client/errors.ts';
import { ModelError } from './model.ts';

/** An error that says of itself that trying again cannot help (the run ends as a terminal failure). */
export class NotRetryableError extends Error {
  override readonly name: string = 'NotRetryableError';
}

/**
 * Whether trying again may help, by the error's type: the one rule for thrown errors, used by the loop for what
 * its model call threw and by the pipeline for everything else. Unknown errors (a bug, a dropped connection) may
 * pass: one more attempt is cheap, and the attempts are bounded.
 */
export function isRetryableError(err: unknown): boolean {
  if (err instanceof NotRetryableError) return false;
  if (err instanceof HubError || err instanceof ModelError) return err.retryable;
  return true;
}

