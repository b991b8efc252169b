import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    globalSetup: ['test/helpers/global-setup.ts'],
    testTimeout: 20_000,
    hookTimeout: 30_000,
    // Test files share one module graph per worker: about 100 s less import time on 2 cores (324 s → 222 s).
    // Every test builds its own bot, store (own key prefix) and fakes, so nothing leaks between files.
    isolate: false,
  },
});
