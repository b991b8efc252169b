import { join } from 'node:path';
import { defineConfig } from 'vitest/config';

/**
 * `npm run bench`: the benchmark only (bench/**\/*.bench-run.ts), one file at a time in one worker
 * so nothing else competes for the CPU, with timeouts long enough for the full scale.
 */
export default defineConfig({
  root: join(import.meta.dirname, '..'),
  test: {
    include: ['bench/**/*.bench-run.ts'],
    fileParallelism: false,
    maxWorkers: 1,
    testTimeout: 60 * 60 * 1000,
    hookTimeout: 5 * 60 * 1000,
    reporters: ['default'],
  },
});
