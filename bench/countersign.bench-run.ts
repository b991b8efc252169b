import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ackChartSvg, ackSeries } from './lib/ack-chart.js';
import { expect, it } from 'vitest';
import { REPOSITORY_ROOT } from './lib/processes.js';
import { formatResults, writeResults } from './lib/report.js';
import { runBenchmark } from './lib/run-benchmark.js';
import { scaleFromEnvironment } from './lib/scale.js';

/**
 * `npm run bench` (BENCH_SCALE=smoke|full, default full; see bench/lib/scale.ts for the other
 * knobs; BENCH_INSPECT=0 starts the processes without --inspect, dropping the event-loop and
 * after-GC numbers). Prints the table and writes bench-results/latest.json (or BENCH_OUTPUT). It
 * reports; it does not fail on a missed target, only when the run itself breaks.
 */
it('benchmarks countersign against a bare Bolt app', async () => {
  const scale = scaleFromEnvironment();
  const results = await runBenchmark({ scale, inspect: process.env.BENCH_INSPECT !== '0', log: (line) => process.stdout.write(`${line}\n`) });
  const output = process.env.BENCH_OUTPUT ?? join(REPOSITORY_ROOT, 'bench-results', scale.name === 'full' ? 'latest.json' : `latest-${scale.name}.json`);
  writeResults(results, output);
  // The chart beside the JSON: ack p99 against concurrency, bare Bolt and the bot as configured.
  const front = process.env.BENCH_SLACK_FRONT === 'inline' ? ', Slack served inline' : '';
  const role = process.env.BENCH_ROLES === 'split' ? `countersign (receiver + worker${front})` : `countersign (all-in-one${front})`;
  writeFileSync(output.replace(/\.json$/, '.svg'), ackChartSvg({ title: `Ack p99: ${role} vs a bare Bolt app`, series: ackSeries(results, 'countersign') }));
  process.stdout.write(`\n${formatResults(results)}\n\nwritten to ${output}\n`);
  expect(results.ackLatency.click.length).toBe(scale.levels.length);
});
