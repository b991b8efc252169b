import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { join } from 'node:path';
import { it } from 'vitest';
import { startBenchContext } from '../lib/bench-context.js';
import { createCleanupStack } from '../lib/cleanup-stack.js';
import { measureClosedLoopClicks } from '../lib/closed-loop-clicks.js';
import { sampleAllocations } from '../lib/inspector.js';
import { createPhaseTimer } from '../lib/phase-timer.js';
import { childPids, cpuMs, threadCpuMs } from '../lib/processes.js';
import { scaleFromEnvironment } from '../lib/scale.js';
import { warmUp } from '../lib/warm-up.js';

/**
 * `npm run bench:probe`: where a click's CPU goes. The closed loop of the benchmark (50 threads in
 * flight, instant model), a few rounds (PROBE_ROUNDS, default 5) after a short warm-up, and per click:
 * the bot process by thread (`front` is the main thread; the busiest other one is the bot thread, the
 * rest are V8's and libuv's helpers), its command spawner with the commands it
 * reaped, Redis, and this process (the fake Slack and model, the clients). For A/B work run two builds
 * alternately: on a shared machine single runs differ more than small changes do. With BENCH_PROFILE
 * set, each round prints `WINDOW <start µs> <end µs>` (CLOCK_MONOTONIC, as the profile's timestamps) to
 * keep the profile's samples to the clicks.
 */
it('shows where the CPU of a click goes', async () => {
  const scale = scaleFromEnvironment();
  scale.warmup = { textTurns: 300, cardCycles: 200, bareRequests: 100, concurrency: 50 };
  const log = (line: string) => process.stdout.write(`${line}\n`);
  const cleanup = createCleanupStack();
  try {
    // BENCH_ALLOCATIONS=<dir>: the bot thread's allocations during the rounds, garbage included, as .heapprofile files.
    const allocationsDirectory = process.env.BENCH_ALLOCATIONS;
    const context = await startBenchContext({ inspect: allocationsDirectory !== undefined, cleanup, phase: createPhaseTimer(() => {}).phase, log });
    await warmUp({ context, scale });
    // PROBE_PENDING=<n>: that many cards left pending first (as the full run's RSS phase leaves them), to
    // see whether a click costs more when many approvals wait.
    const pending = Number(process.env.PROBE_PENDING ?? 0);
    if (pending > 0) await context.mentionBurst({ threads: context.newThreads(pending), mode: 'card', concurrency: 50 });
    const botPid = context.bot.handle.pid;
    const redisPid = Number(/process_id:(\d+)/.exec(await context.redisInspector.info('server'))?.[1]);
    // BENCH_ROLES=split: the bot is a receiver; its turns, spawner and commands are in the worker process.
    const workerPid = context.botWorker?.handle.pid;
    const spawners = [...childPids(botPid), ...(workerPid === undefined ? [] : childPids(workerPid))];
    const sample = () => ({
      threads: threadCpuMs(botPid),
      worker: workerPid === undefined ? 0 : cpuMs(workerPid),
      spawners: spawners.reduce((sum, pid) => sum + cpuMs(pid, { children: true }), 0),
      redis: cpuMs(redisPid),
      self: process.cpuUsage(),
      at: process.hrtime.bigint() / 1000n,
    });
    // This process is profiled too (the fake Slack and model, the clients): they share the cores.
    const profileDirectory = process.env.BENCH_PROFILE;
    const session = profileDirectory ? new Session() : undefined;
    if (session) {
      session.connect();
      await session.post('Profiler.enable');
      await session.post('Profiler.start');
    }
    // What a click asks of Slack and the model: calls per method during the clicks.
    const slackCalls = new Map<string, number>();
    let counting = false;
    context.slack.onCall((call) => {
      if (counting) slackCalls.set(call.method, (slackCalls.get(call.method) ?? 0) + 1);
    });
    const rounds = async () => {
      for (let round = 0; round < Number(process.env.PROBE_ROUNDS ?? 5); round += 1) {
        let before = sample();
        const result = await measureClosedLoopClicks({
          context,
          scale,
          onCardsReady: () => {
            before = sample();
            slackCalls.clear();
            counting = true;
          },
        });
        counting = false;
        const after = sample();
        // The lanes' first clicks cost CPU too, though their latencies are reported apart.
        const clicks = result.clicks + result.lanes;
        const perClick = (ms: number) => (ms / clicks).toFixed(2);
        const threads = [...after.threads]
          .map(([tid, ms]) => ({ name: tid === botPid ? 'front' : String(tid), ms: ms - (before.threads.get(tid) ?? 0) }))
          .filter((thread) => thread.ms > 0)
          .sort((left, right) => right.ms - left.ms);
        const self = process.cpuUsage(before.self);
        log(
          `round ${round}: answer p50 ${result.answeredMs.p50} ms, p99 ${result.answeredMs.p99} ms, ${result.answersPerSecond}/s (card updated p50 ${result.cardUpdatedMs.p50} ms, p99 ${result.cardUpdatedMs.p99} ms) | CPU ms per click: ` +
            `bot threads ${threads.map((thread) => `${thread.name} ${perClick(thread.ms)}`).join(', ')}; ` +
            (workerPid === undefined ? '' : `worker process ${perClick(after.worker - before.worker)}; `) +
            `spawner ${perClick(after.spawners - before.spawners)}; ` +
            `Redis ${perClick(after.redis - before.redis)}; benchmark ${perClick((self.user + self.system) / 1000)}; first wave max ${result.firstWaveMs.max} ms`,
        );
        log(`  Slack calls per click: ${[...slackCalls].map(([method, count]) => `${method} ${(count / clicks).toFixed(2)}`).join(', ')}`);
        if (process.env.BENCH_PROFILE) log(`WINDOW ${before.at} ${after.at}`);
      }
    };
    if (allocationsDirectory && context.botInspectorUrl) {
      const profiles = await sampleAllocations(context.botInspectorUrl, rounds);
      for (const [index, profile] of profiles.entries()) writeFileSync(join(allocationsDirectory, `bot-worker-${index}.heapprofile`), JSON.stringify(profile));
    } else {
      await rounds();
    }
    if (session && profileDirectory) {
      const { profile } = await session.post('Profiler.stop');
      writeFileSync(join(profileDirectory, `benchmark-${process.pid}.cpuprofile`), JSON.stringify(profile));
      session.disconnect();
    }
  } finally {
    await cleanup.runAll();
  }
});
