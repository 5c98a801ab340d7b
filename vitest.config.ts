import { configDefaults, defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The browser test needs Chromium; it runs with `npm run test:browser` (vitest.browser.config.ts), and in CI.
    exclude: [...configDefaults.exclude, 'test/browser/**'],
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
});
