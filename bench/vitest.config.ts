import { join } from 'node:path';
import { defineConfig } from 'vitest/config';

/**
 * `npm run bench`: the benchmark only (bench/**\/*.bench-run.ts), one file at a time in one worker
 * so nothing else competes for the CPU, with timeouts long enough for the full scale.
 */
export default defineConfig({
  root: join(import.meta.dirname, '..'),
  test: {
    // `npm run bench:probe` (BENCH_PROBES=1): the diagnostic probes instead, run the same way.
    include: [process.env.BENCH_PROBES === '1' ? 'bench/probes/*.probe.ts' : 'bench/**/*.bench-run.ts'],
    fileParallelism: false,
    maxWorkers: 1,
    testTimeout: 60 * 60 * 1000,
    hookTimeout: 5 * 60 * 1000,
    reporters: ['default'],
  },
});
