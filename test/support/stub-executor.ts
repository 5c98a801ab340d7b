// An executor that answers from a list of results, one per run, and records what it was asked: the pipeline's
// other unit-test seam (no model, no loop).
import type { ActivationInput, Executor, ExecutorResult } from '../../executors/executor.ts';

export type StubRun = Partial<ExecutorResult> & Pick<ExecutorResult, 'termination'>;

export class StubExecutor implements Executor {
  readonly inputs: ActivationInput[] = [];
  readonly #runs: StubRun[];

  constructor(runs: StubRun[]) {
    this.#runs = runs;
  }

  missingRequirement(): undefined {
    return undefined;
  }

  run(input: ActivationInput): Promise<ExecutorResult> {
    this.inputs.push(input);
    const r = this.#runs.shift();
    if (!r) return Promise.reject(new Error(`StubExecutor: no run left for call ${this.inputs.length}`));
    return Promise.resolve({ text: '', posted: false, partial: false, steps: 1, usage: { inputTokens: 10, outputTokens: 5, cachedTokens: 0, costUsd: 0.001 }, ...r });
  }
}
