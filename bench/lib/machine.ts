import { execFileSync } from 'node:child_process';
import { cpus, loadavg, release, totalmem } from 'node:os';
import { REPOSITORY_ROOT } from './processes.js';
import type { BenchResults } from './results.js';
import { round } from './stats.js';

/**
 * What the run ran on, so results from different machines are not compared blindly. The load
 * averages at start and end show whether other work shared the machine meanwhile.
 */
export function describeMachine(options: { loadAverageAtStart: number[] }): BenchResults['machine'] {
  let redisVersion = 'unknown';
  try {
    redisVersion = execFileSync(process.env.REDIS_SERVER_BIN ?? 'redis-server', ['--version'], { encoding: 'utf8' }).trim();
  } catch {
    // Reported as unknown.
  }
  return {
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model ?? 'unknown',
    totalMemoryBytes: totalmem(),
    node: process.version,
    platform: `${process.platform} ${release()}`,
    redis: redisVersion,
    repository: REPOSITORY_ROOT,
    loadAverageAtStart: options.loadAverageAtStart.map((value) => round(value)),
    loadAverageAtEnd: loadavg().map((value) => round(value)),
  };
}
