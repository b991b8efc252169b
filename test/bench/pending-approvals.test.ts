import { Redis } from 'ioredis';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { measuredBotOf, type ServerUnderTest } from '../../bench/lib/bench-context.js';
import { measurePendingApprovals } from '../../bench/lib/pending-approvals.js';
import type { ProcessReadings } from '../../bench/lib/process-readings.js';
import type { LoadResult } from '../../bench/lib/processes.js';
import { SCALES } from '../../bench/lib/scale.js';
import { createThreadFactory, type MentionMode, type Thread } from '../../bench/lib/workload.js';
import { startRedisServer, type RedisServerHandle } from '../helpers/redis-server.js';

// The receiver is this process (a real pid, in case anything reads /proc for it); the worker's pid is only ever read through the fakes.
const RECEIVER_PID = process.pid;
const WORKER_PID = 2_000_000_000;

let redis: RedisServerHandle;
let inspector: Redis;
beforeEach(async () => {
  redis = await startRedisServer();
  inspector = new Redis(redis.url);
});
afterEach(async () => {
  inspector.disconnect();
  await redis.stop();
});

const server = (pid: number, name: string): ServerUnderTest => ({ handle: { pid, name } as ServerUnderTest['handle'], eventsUrl: `http://${name}/slack/events` });
const noLoad: LoadResult = { latenciesMs: [], sentAtMs: [], statuses: [], startedAt: 0, wallMs: 0 };

/** Readings that record which process and which inspector they were asked about. */
function recordingReadings(cpu: Map<number, number>) {
  const read = { cpu: new Set<number>(), idle: [] as number[][], rss: [] as number[], heap: [] as string[] };
  const readings: ProcessReadings = {
    cpuMs: (pid) => {
      read.cpu.add(pid);
      return cpu.get(pid) ?? 0;
    },
    waitForCpuIdle: async (pids) => {
      read.idle.push(typeof pids === 'number' ? [pids] : [...pids]);
    },
    settledRss: async (pid) => {
      read.rss.push(pid);
      return 100 * 1024 * 1024;
    },
    heapAfterGc: async (url) => {
      read.heap.push(url);
      return { heapUsedBytes: 1, heapTotalBytes: 1, externalBytes: 1, arrayBuffersBytes: 1, rssBytes: 90 * 1024 * 1024 };
    },
  };
  return { read, readings };
}

/**
 * BENCH_ROLES=split: the bot the benchmark sends to is a receiver (COUNTERSIGN_ROLE=receiver hands
 * every turn off and runs none) and a worker beside it runs every turn and holds what a turn leaves in
 * memory. The RSS-at-N-pending points and the CPU per turn read the receiver; the worker was started
 * without an inspector, so it had no after-GC reading either.
 */
it('split deployment: the RSS points read the worker, which runs the turns, and the CPU per turn counts both processes', async () => {
  const receiver = server(RECEIVER_PID, 'countersign');
  const worker = server(WORKER_PID, 'countersign-worker');
  const cpu = new Map<number, number>();
  const { read, readings } = recordingReadings(cpu);
  const context = {
    bot: receiver,
    botWorker: worker,
    botInspectorUrl: undefined,
    measuredBot: measuredBotOf({ bot: receiver, botInspectorUrl: 'ws://receiver-inspector', worker, workerInspectorUrl: 'ws://worker-inspector' }),
    redisInspector: inspector,
    newThreads: createThreadFactory('P'),
    log: () => {},
    mentionBurst: async ({ threads, mode }: { threads: Thread[]; mode: MentionMode }) => {
      // A turn costs the receiver 1 ms (the hand-off) and the worker 4 (the turn); a card turn leaves a pending step.
      cpu.set(RECEIVER_PID, (cpu.get(RECEIVER_PID) ?? 0) + threads.length);
      cpu.set(WORKER_PID, (cpu.get(WORKER_PID) ?? 0) + 4 * threads.length);
      if (mode === 'card') for (const thread of threads) await inspector.hset(`countersign:{s0}:step:${thread.marker}`, 'phase', 'pending');
      return noLoad;
    },
  };
  const scale = { ...SCALES.smoke, pendingTargets: [0, 20], creation: { concurrency: 5, batch: 10 }, rssSettleMs: 0 };
  const measurement = await measurePendingApprovals({ context: context as never, scale, readings });

  expect(read.rss).toEqual([WORKER_PID, WORKER_PID]);
  expect(read.heap).toEqual(['ws://worker-inspector', 'ws://worker-inspector']);
  expect(measurement.rssProcess).toBe('worker process');
  expect(read.cpu).toEqual(new Set([RECEIVER_PID, WORKER_PID]));
  expect(measurement.creation).toMatchObject({ turns: 20, cpuMs: 100, processes: 'receiver + worker', cpuMsByProcess: { receiver: 20, worker: 80 } });
  // Every wait for the work to be done waits for the worker too.
  expect(read.idle.length).toBeGreaterThan(0);
  for (const pids of read.idle) expect(pids).toContain(WORKER_PID);
});

it('all-in-one: the one process is measured, through its own inspector', () => {
  const bot = server(RECEIVER_PID, 'countersign');
  const measured = measuredBotOf({ bot, botInspectorUrl: 'ws://bot-inspector', worker: undefined, workerInspectorUrl: undefined });
  expect(measured.processes).toEqual([bot]);
  expect(measured.turnRunner).toEqual({ label: 'all-in-one process', server: bot, inspectorUrl: 'ws://bot-inspector' });
});
