import { randomUUID } from 'node:crypto';
import { pino } from 'pino';
import { describe, expect, inject, it } from 'vitest';
import { createRedisStore } from '../store/redis-store.js';
import { createLoadGate, type LoadMonitor } from './load-gate.js';
import { createThreadWorker } from './thread-worker.js';
import { encodeWorkItem, type WorkItem } from './work-item.js';
import { createWorkPuller } from './work-puller.js';

const calm: LoadMonitor = { delayMs: () => 0, onSample: () => () => {}, close() {} };
const item = (threadTs: string): WorkItem => ({ kind: 'message', userId: 'U1', text: 'hi', ts: threadTs, teamId: 'T1', channel: 'C1', threadTs, readEarlierMessages: false });
const RUNNING = 'T1:C1:1700000000.000100';
const LATE = 'T1:C1:1700000000.000200';

function deferred<T = void>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((done) => (resolve = done));
  return { promise, resolve };
}

describe('work puller told to stop (SIGTERM) while one of its turns still runs', () => {
  it('does not start a thread handed off after that; its work stays in Redis, offered to another worker', async () => {
    const store = createRedisStore({ url: inject('redisUrl'), keyPrefix: `test:${randomUUID()}:` });
    const running = deferred();
    const runningMayEnd = deferred();
    const logger = pino({ level: 'silent' });
    const handled: string[] = [];
    const worker = createThreadWorker({
      store,
      logger,
      handle: async (work) => {
        handled.push(work.threadTs);
        if (work.threadTs === '1700000000.000100') {
          running.resolve();
          await runningMayEnd.promise;
        }
      },
    });
    // The puller's second wait: the one after it took the running thread.
    const waiting = deferred();
    let waits = 0;
    const puller = createWorkPuller({
      store: {
        nextReadyThreads: (options) => {
          waits += 1;
          if (waits === 2) waiting.resolve();
          return store.nextReadyThreads(options);
        },
        returnReadyThreads: (threadKeys) => store.returnReadyThreads(threadKeys),
      },
      worker,
      gate: createLoadGate({ monitor: calm, maxConcurrent: 10, maxEventLoopDelayMs: 1_000 }),
      logger,
    });
    try {
      puller.start();
      // A turn runs on this worker (handed off by a receiver, taken by the puller), and the puller waits for more.
      await store.handOffWork(RUNNING, encodeWorkItem(item('1700000000.000100')));
      await running.promise;
      await waiting.promise;
      // SIGTERM: bot.stop() stops the puller, then waits for the running turns (worker.idle()).
      await puller.stop();
      // Its wait in progress ended with the stop: the loop is over, so nothing it takes after can start here.
      await puller.idle();
      // A receiver hands off a new thread meanwhile.
      await store.handOffWork(LATE, encodeWorkItem(item('1700000000.000200')));
      runningMayEnd.resolve();
      await worker.idle();
      // Still queued, unlocked, and its hint back on the ready list: another worker takes it at once
      // (without the hint, its recovery sweep would, after the grace).
      expect(await store.busyThreads({ limit: 10 })).toEqual([LATE]);
      expect(await store.nextReadyThreads({ timeoutMs: 1_000, max: 5 })).toEqual([LATE]);
      const other = createThreadWorker({ store, logger: pino({ level: 'silent' }), handle: async (work) => void handled.push(`other:${work.threadTs}`) });
      expect(await other.pickUp(LATE)).toBe(true);
      expect(handled).toEqual(['1700000000.000100', 'other:1700000000.000200']);
    } finally {
      runningMayEnd.resolve();
      await worker.idle();
      await store.close();
    }
  });
});

describe('work puller told to stop while it waits for handed-off work', () => {
  it('ends that wait at once: idle() does not sit out the wait (every bot stop would take up to its length)', async () => {
    const waiting = deferred();
    const worker = createThreadWorker({ store: createRedisStore({ url: inject('redisUrl'), keyPrefix: `test:${randomUUID()}:` }), logger: pino({ level: 'silent' }), handle: async () => {} });
    const puller = createWorkPuller({
      store: {
        // A wait that only its signal ends: with the signal not passed or not aborted, idle() never resolves.
        nextReadyThreads: ({ signal }) =>
          new Promise<string[]>((resolve) => {
            waiting.resolve();
            signal?.addEventListener('abort', () => resolve([]), { once: true });
          }),
        returnReadyThreads: async () => {},
      },
      worker,
      gate: createLoadGate({ monitor: calm, maxConcurrent: 10, maxEventLoopDelayMs: 1_000 }),
      logger: pino({ level: 'silent' }),
    });
    puller.start();
    await waiting.promise;
    await puller.stop();
    await puller.idle();
  });
});
