import { randomUUID } from 'node:crypto';
import { pino } from 'pino';
import { describe, expect, inject, it } from 'vitest';
import { createRedisStore } from '../store/redis-store.js';
import { createLoadGate, type LoadMonitor } from './load-gate.js';
import { createThreadWorker } from './thread-worker.js';
import { encodeWorkItem, type WorkItem } from './work-item.js';
import { createWorkPuller } from './work-puller.js';

const item = (threadTs: string): WorkItem => ({ kind: 'message', userId: 'U1', text: 'hi', ts: threadTs, teamId: 'T1', channel: 'C1', threadTs, readEarlierMessages: false });
const keyOf = (threadTs: string) => `T1:C1:${threadTs}`;

function deferred<T = void>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((done) => (resolve = done));
  return { promise, resolve };
}

/** A monitor whose event-loop delay the test sets; `sample()` is its next tick. */
function settableMonitor() {
  let delay = 0;
  const listeners = new Set<() => void>();
  const monitor: LoadMonitor = {
    delayMs: () => delay,
    onSample(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    close() {},
  };
  return {
    monitor,
    set(ms: number) {
      delay = ms;
      for (const listener of listeners) listener();
    },
  };
}

/**
 * README, "Receivers and workers": workers "take new threads only while their event loop keeps up
 * (`COUNTERSIGN_MAX_EVENT_LOOP_DELAY_MS`), so waiting work waits in Redis, where any worker with room
 * can take it."
 *
 * The puller asks the gate for room, then blocks up to a second in BLMPOP for up to that many hints.
 * If its loop falls behind while it waits (the turns it already runs lag it past the limit), the
 * hints it pops are no longer admitted: `work-puller.ts` holds them in memory at `gate.acquire()`
 * until this worker has room again. The ready list is empty meanwhile, so an idle worker's BLMPOP
 * finds nothing; the threads start only when the busy worker's loop recovers, or when another
 * worker's recovery sweep finds them a whole lock TTL (30 s) after they were handed off.
 */
describe('a worker whose loop falls behind while it waits for hand-offs', () => {
  it('leaves the hints it has no room for in Redis, where an idle worker takes them', async () => {
    const prefix = `test:${randomUUID()}:`;
    const logger = pino({ level: 'silent' });
    const receiver = createRedisStore({ url: inject('redisUrl'), keyPrefix: prefix });
    const storeA = createRedisStore({ url: inject('redisUrl'), keyPrefix: prefix });
    const storeB = createRedisStore({ url: inject('redisUrl'), keyPrefix: prefix });
    const load = settableMonitor();
    const limits = { monitor: load.monitor, maxConcurrent: 10, maxEventLoopDelayMs: 500 };
    const busyStarted = deferred();
    const busyMayEnd = deferred();
    const workerA = createThreadWorker({
      store: storeA,
      logger,
      gate: createLoadGate(limits),
      handle: async (work) => {
        if (work.threadTs === 'busy') {
          busyStarted.resolve();
          await busyMayEnd.promise;
        }
      },
    });
    const pullGateA = createLoadGate(limits);
    // A's waits for hand-offs, as its puller makes them: the second one starts once the busy turn runs.
    let waits = 0;
    const secondWait = deferred();
    const poppedWaiting = deferred();
    const countingA = {
      nextReadyThreads: async (options: { timeoutMs: number; max: number }) => {
        waits += 1;
        if (waits === 2) secondWait.resolve();
        const taken = await storeA.nextReadyThreads(options);
        if (taken.includes(keyOf('waiting'))) poppedWaiting.resolve();
        return taken;
      },
      returnReadyThreads: (threadKeys: readonly string[]) => storeA.returnReadyThreads(threadKeys),
    };
    const pullerA = createWorkPuller({ store: countingA, worker: workerA, gate: pullGateA, logger });
    try {
      pullerA.start();
      await receiver.handOffWork(keyOf('busy'), encodeWorkItem(item('busy')));
      await busyStarted.promise;
      // A has room for 9 more and is blocked in BLMPOP for them.
      await secondWait.promise;
      // Its loop falls behind (the busy turn's CPU), while the pop is outstanding.
      load.set(2_000);
      // An approval's resume is handed off meanwhile.
      await receiver.handOffWork(keyOf('waiting'), encodeWorkItem(item('waiting')));
      // A popped its hint, with no room left to start it (loaded, one turn running).
      await poppedWaiting.promise;

      // An idle worker B asks for hand-offs: BLMPOP answers at once with whatever is in the list.
      const takenByB = await storeB.nextReadyThreads({ timeoutMs: 1_000, max: 10 });
      expect(takenByB).toEqual([keyOf('waiting')]);
    } finally {
      load.set(0);
      busyMayEnd.resolve();
      await pullerA.stop();
      await workerA.idle();
      await receiver.close();
      await storeA.close();
      await storeB.close();
    }
  });
});
