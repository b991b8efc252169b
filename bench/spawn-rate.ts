/**
 * Spawns per second and the bot process's own CPU per spawn, for command tools spawned directly
 * (`runCommand`) and through the spawner process, in one run, with this process holding a big heap
 * as the bot does. Interleaved rounds; the report is ratios (absolute numbers depend on the box).
 *
 *   npm run build && node bench/spawn-rate.ts
 *
 * Settings: SPAWN_BENCH_HEAP_MB (default 300), SPAWN_BENCH_SPAWNS per round (400), SPAWN_BENCH_CONCURRENCY
 * (8), SPAWN_BENCH_ROUNDS per runner (3). Not part of `npm run bench` or `npm test`.
 */
import { readFileSync } from 'node:fs';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { createSpawnerCommandRunner } from '../dist/tools/command/spawner-client.js';
import { runCommand, type RunCommand } from '../dist/tools/command/run-command.js';

const setting = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const HEAP_MB = setting('SPAWN_BENCH_HEAP_MB', 300);
const SPAWNS = setting('SPAWN_BENCH_SPAWNS', 400);
const CONCURRENCY = setting('SPAWN_BENCH_CONCURRENCY', 8);
const ROUNDS = setting('SPAWN_BENCH_ROUNDS', 3);
const COMMAND = { argv: ['true'], timeoutMs: 10_000, outputLimit: 1000 };

interface Round {
  spawnsPerSecond: number;
  /** This process's CPU (user + system) per spawn. */
  parentCpuMsPerSpawn: number;
  /** The spawner process's CPU per spawn (0 for direct). */
  spawnerCpuMsPerSpawn: number;
  eventLoopDelayP99Ms: number;
}

// Touched, live memory: what the fork has to copy page tables for.
const ballast: Float64Array[] = [];
for (let megabyte = 0; megabyte < HEAP_MB; megabyte++) ballast.push(new Float64Array(131_072).fill(megabyte + 0.5));

const spawner = createSpawnerCommandRunner();
await spawner.run(COMMAND); // Forked once, up front: a bot forks it on its first command call.

async function measure(run: RunCommand, spawnerPid: number | undefined): Promise<Round> {
  const delay = monitorEventLoopDelay({ resolution: 1 });
  const spawnerCpuBefore = processCpuMs(spawnerPid);
  const cpuBefore = process.cpuUsage();
  const startedAt = performance.now();
  delay.enable();
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next++ < SPAWNS) {
        const result = await run(COMMAND);
        if (result.exitCode !== 0) throw new Error(`true failed: ${JSON.stringify(result)}`);
      }
    }),
  );
  delay.disable();
  const elapsedMs = performance.now() - startedAt;
  const cpu = process.cpuUsage(cpuBefore);
  return {
    spawnsPerSecond: (SPAWNS / elapsedMs) * 1000,
    parentCpuMsPerSpawn: (cpu.user + cpu.system) / 1000 / SPAWNS,
    spawnerCpuMsPerSpawn: (processCpuMs(spawnerPid) - spawnerCpuBefore) / SPAWNS,
    eventLoopDelayP99Ms: delay.percentile(99) / 1e6,
  };
}

/** User + system CPU of another process, from /proc (Linux); 0 elsewhere or without a pid. */
function processCpuMs(pid: number | undefined): number {
  if (pid === undefined || process.platform !== 'linux') return 0;
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /s, '').split(' ');
  const ticks = Number(fields[11]) + Number(fields[12]);
  return (ticks / 100) * 1000; // USER_HZ is 100 on Linux.
}

const rounds: Record<'direct' | 'spawner', Round[]> = { direct: [], spawner: [] };
for (let round = 0; round < ROUNDS; round++) {
  rounds.direct.push(await measure(runCommand, undefined));
  rounds.spawner.push(await measure(spawner.run, spawner.spawnerPid()));
}
await spawner.close();

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};
const summary = (which: 'direct' | 'spawner') => ({
  spawnsPerSecond: median(rounds[which].map((round) => round.spawnsPerSecond)),
  parentCpuMsPerSpawn: median(rounds[which].map((round) => round.parentCpuMsPerSpawn)),
  spawnerCpuMsPerSpawn: median(rounds[which].map((round) => round.spawnerCpuMsPerSpawn)),
  eventLoopDelayP99Ms: median(rounds[which].map((round) => round.eventLoopDelayP99Ms)),
});
const direct = summary('direct');
const viaSpawner = summary('spawner');
const fixed = (value: number, digits = 2) => value.toFixed(digits);

console.log(`heap ballast ${HEAP_MB} MB (rss ${Math.round(process.memoryUsage().rss / 2 ** 20)} MB), ${SPAWNS} spawns of \`true\` per round, ${CONCURRENCY} at once, ${ROUNDS} interleaved rounds each (medians)`);
console.log('| runner | spawns/s | bot CPU ms/spawn | spawner CPU ms/spawn | event loop p99 ms |');
console.log('|---|---|---|---|---|');
for (const [name, row] of [['direct', direct], ['spawner', viaSpawner]] as const) {
  console.log(`| ${name} | ${fixed(row.spawnsPerSecond, 0)} | ${fixed(row.parentCpuMsPerSpawn)} | ${fixed(row.spawnerCpuMsPerSpawn)} | ${fixed(row.eventLoopDelayP99Ms, 1)} |`);
}
console.log(`spawner / direct: spawns/s ×${fixed(viaSpawner.spawnsPerSecond / direct.spawnsPerSecond)}, bot CPU per spawn ×${fixed(viaSpawner.parentCpuMsPerSpawn / direct.parentCpuMsPerSpawn)}, event loop p99 ×${fixed(viaSpawner.eventLoopDelayP99Ms / direct.eventLoopDelayP99Ms)}`);
console.log(JSON.stringify({ heapMb: HEAP_MB, spawns: SPAWNS, concurrency: CONCURRENCY, rounds, direct, spawner: viaSpawner, loadAverage: (await import('node:os')).loadavg() }));
