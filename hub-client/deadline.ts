// An abort signal that fires at a deadline or when a parent aborts, and that can be disposed of as soon as the
// work is done. AbortSignal.timeout() keeps its timer (and the signal) alive until it fires: with a 5-minute
// activation deadline and a 30-second timeout per hub call, thousands of finished activations' timers piled up.

export interface Deadline {
  readonly signal: AbortSignal;
  /** True when the deadline itself (not the parent) aborted the signal. */
  readonly timedOut: boolean;
  /** Clears the timer and the parent listener; call it when the work ends, however it ends. */
  dispose(): void;
}

export function deadline(ms: number, parent?: AbortSignal): Deadline {
  const controller = new AbortController();
  let timedOut = false;
  const onParentAbort = (): void => controller.abort(parent?.reason);
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort(new DOMException(`deadline of ${ms} ms passed`, 'TimeoutError'));
  }, ms);
  timer.unref?.();
  if (parent?.aborted) onParentAbort();
  else parent?.addEventListener('abort', onParentAbort, { once: true });
  return {
    signal: controller.signal,
    get timedOut() {
      return timedOut;
    },
    dispose() {
      clearTimeout(timer);
      parent?.removeEventListener('abort', onParentAbort);
    },
  };
}
