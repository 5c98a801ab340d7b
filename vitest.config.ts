import { availableParallelism } from 'node:os';
import { configDefaults, defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The browser test needs Chromium; it runs with `npm run test:browser` (vitest.browser.config.ts), and in CI.
    exclude: [...configDefaults.exclude, 'test/browser/**'],
    globalSetup: ['test/global-setup.ts'],
    // Most tests wait on subprocesses, servers and timers, not the CPU: one worker more than there are cores
    // (vitest's default is one fewer, a single worker on this project's 2-core machines).
    maxWorkers: availableParallelism() + 1,
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
});
