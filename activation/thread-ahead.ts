// A notification's thread read ahead, while the run's claim command is in Redis: the reply then waits one round
// trip less. Handed over once, so that nothing here holds the thread through the model's latency.
import type { Post } from '../hub-client/types.ts';

export class ThreadAhead {
  static readonly none = new ThreadAhead(undefined, undefined);
  readonly #for: string | undefined;
  #reading: Promise<Post> | undefined;

  private constructor(notificationId: string | undefined, reading: Promise<Post> | undefined) {
    this.#for = notificationId;
    this.#reading = reading;
  }

  /**
   * The read of notification `notificationId`'s thread, begun. A read never taken (the agent held back, an answer
   * kept from an earlier attempt) fails quietly; one taken fails for whoever takes it.
   */
  static start(notificationId: string, reading: Promise<Post>): ThreadAhead {
    reading.catch(() => undefined);
    return new ThreadAhead(notificationId, reading);
  }

  /** The read for `notificationId`, once; undefined when none was begun for it (or it was taken already). */
  take(notificationId: string): Promise<Post> | undefined {
    if (notificationId !== this.#for) return undefined;
    const reading = this.#reading;
    this.#reading = undefined;
    return reading;
  }
}
