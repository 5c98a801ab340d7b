// The four CLI executors as the daemon builds them: one shared concurrency limit, one workspace root.
import { aiderAdapter } from './aider.ts';
import type { CliAdapter, CliType } from './adapter.ts';
import { claudeCodeAdapter } from './claude-code.ts';
import { CliExecutor, type CliExecutorOptions } from './cli-executor.ts';
import { Semaphore } from './concurrency.ts';
import { gooseAdapter } from './goose.ts';
import { opencodeAdapter } from './opencode.ts';

export interface CliExecutorsOptions extends Omit<CliExecutorOptions, 'adapter' | 'binary' | 'slots'> {
  /** `executors.cli.max_concurrent`: CLI activations at once, whatever the worker concurrency. */
  maxConcurrent: number;
  /** Executable per CLI (path or name); default the CLI's usual name on PATH. */
  binaries?: Partial<Record<CliType, string>>;
  claudeMaxRetries?: number;
}

export function createCliExecutors(opts: CliExecutorsOptions): CliExecutor[] {
  const slots = new Semaphore(opts.maxConcurrent);
  const adapters: CliAdapter[] = [claudeCodeAdapter({ maxRetries: opts.claudeMaxRetries }), gooseAdapter(), aiderAdapter(), opencodeAdapter()];
  return adapters.map((adapter) => new CliExecutor({ ...opts, adapter, binary: opts.binaries?.[adapter.type], slots }));
}
