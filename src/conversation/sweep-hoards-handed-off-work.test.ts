import { randomUUID } from 'node:crypto';
import { pino } from 'pino';
import { describe, expect, inject, it } from 'vitest';
import { createRedisStore } from '../store/redis-store.js';
import { createLoadGate, type LoadMonitor } from './load-gate.js';
import { recoverStalledWork } from './recover-stalled-work.js';
import { createThreadWorker, type ThreadWorker } from './thread-worker.js';
import { encodeWorkItem, type WorkItem } from './work-item.js';
import { createWorkPuller } from './work-puller.js';

const calm: LoadMonitor = { delayMs: () => 0, onSample: () => () => {}, close() {} };
const item = (threadTs: string): WorkItem => ({ kind: 'message', userId: 'U1', text: 'hi', ts: threadTs, teamId: 'T1', channel: 'C1', threadTs, readEarlierMessages: false });
const keyOf = (threadTs: string) => `T1:C1:${threadTs}`;

function deferred<T = void>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((done) => (resolve = done));
  return { promise, resolve };
}

/**
 * README, "Receivers and workers": workers "take new threads only while their event loop keeps up
 * (`COUNTERSIGN_MAX_EVENT_LOOP_DELAY_MS`), so waiting work waits in Redis, where any worker with room
 * can take it". The recovery sweep (`recoverStalledWork`, every 5 s on every worker) picks up the 20
 * oldest threads with queued work and a free lock, with no grace period and without asking the
 * worker's load gate: a worker that is full takes freshly handed-off threads out of Redis and holds
 * their locks while they wait for its gate. When another worker gets room, the hints it pops are for
 * threads it cannot lock, and the work waits behind the full worker's turns.
 */
describe('a full worker whose recovery sweep runs while handed-off threads wait in Redis', () => {
  it('leaves them for a worker with room: the other worker, freed, takes and runs them', async () => {
    const prefix = `test:${randomUUID()}:`;
    const receiver = createRedisStore({ url: inject('redisUrl'), keyPrefix: prefix });
    const store1 = createRedisStore({ url: inject('redisUrl'), keyPrefix: prefix });
    const store2 = createRedisStore({ url: inject('redisUrl'), keyPrefix: prefix });
    const logger = pino({ level: 'silent' });
    const handled: string[] = [];
    const long1Started = deferred();
    const long1MayEnd = deferred();
    const long2Started = deferred();
    const long2MayEnd = deferred();
    const waitingHandled = deferred();
    // Each worker built as create-bot builds one: a gate for its turns and one for its puller, alike.
    const makeWorker = (name: string, store: typeof store1) => {
      const limits = { monitor: calm, maxConcurrent: 1, maxEventLoopDelayMs: 1_000 };
      const worker = createThreadWorker({
        store,
        logger,
        gate: createLoadGate(limits),
        handle: async (work) => {
          handled.push(`${name}:${work.threadTs}`);
          if (work.threadTs === 'long1') {
            long1Started.resolve();
            await long1MayEnd.promise;
          } else if (work.threadTs === 'long2') {
            long2Started.resolve();
            await long2MayEnd.promise;
          } else if (work.threadTs === 'waiting') waitingHandled.resolve();
        },
      });
      return { worker, pullGate: createLoadGate(limits) };
    };
    const w1 = makeWorker('w1', store1);
    const w2 = makeWorker('w2', store2);
    // W2's pick-ups, as its puller makes them: resolved when each is over.
    const w2PickUps: Array<{ threadKey: string; done: Promise<boolean> }> = [];
    const w2PickedUpWaiting = deferred<Promise<boolean>>();
    const w2Worker: ThreadWorker = {
      ...w2.worker,
      pickUp: (threadKey) => {
        const done = w2.worker.pickUp(threadKey);
        w2PickUps.push({ threadKey, done });
        if (threadKey === keyOf('waiting')) w2PickedUpWaiting.resolve(done);
        return done;
      },
    };
    const puller1 = createWorkPuller({ store: store1, worker: w1.worker, gate: w1.pullGate, logger });
    const puller2 = createWorkPuller({ store: store2, worker: w2Worker, gate: w2.pullGate, logger });
    try {
      // Both workers take one long turn each (a slow model, a long command): both are full.
      puller1.start();
      await receiver.handOffWork(keyOf('long1'), encodeWorkItem(item('long1')));
      await long1Started.promise;
      puller2.start();
      await receiver.handOffWork(keyOf('long2'), encodeWorkItem(item('long2')));
      await long2Started.promise;

      // A receiver hands off an approved click's resume, say: it waits in Redis for a worker with room.
      await receiver.handOffWork(keyOf('waiting'), encodeWorkItem(item('waiting')));
      // W1's periodic sweep runs meanwhile (create-bot: alsoRun on every sweep of a worker).
      await recoverStalledWork({ store: store1, worker: w1.worker, now: Date.now, graceMs: 30_000, logger });

      // W2's long turn ends: it has room now and pops the waiting thread's hint.
      long2MayEnd.resolve();
      const pickUp = await w2PickedUpWaiting.promise;
      const tookIt = await pickUp;
      // The worker with room runs it; the full worker (still in its long turn) does not hold it.
      expect({ tookIt, handled: [...handled] }).toEqual({ tookIt: true, handled: ['w1:long1', 'w2:long2', 'w2:waiting'] });
    } finally {
      long1MayEnd.resolve();
      long2MayEnd.resolve();
      await puller1.stop();
      await puller2.stop();
      await w1.worker.idle();
      await w2.worker.idle();
      await receiver.close();
      await store1.close();
      await store2.close();
    }
  });
});

/**
 * README: "A worker told to stop (SIGTERM) finishes its turns but starts no new thread; one handed to
 * it meanwhile is left queued for another worker's sweep." A thread the sweep took while the worker was
 * full holds its lock and waits at the worker's gate; told to stop, the worker still starts its turn
 * (worker.idle() waits for it), where a thread its puller had popped would be left in Redis.
 */
describe('a full worker told to stop while a thread its sweep took waits for its gate', () => {
  it('does not start that thread on its way out: it is left queued and unlocked for another worker', async () => {
    const store = createRedisStore({ url: inject('redisUrl'), keyPrefix: `test:${randomUUID()}:` });
    const logger = pino({ level: 'silent' });
    const handled: string[] = [];
    const longStarted = deferred();
    const longMayEnd = deferred();
    const limits = { monitor: calm, maxConcurrent: 1, maxEventLoopDelayMs: 1_000 };
    const worker = createThreadWorker({
      store,
      logger,
      gate: createLoadGate(limits),
      handle: async (work) => {
        handled.push(work.threadTs);
        if (work.threadTs === 'long') {
          longStarted.resolve();
          await longMayEnd.promise;
        }
      },
    });
    const puller = createWorkPuller({ store, worker, gate: createLoadGate(limits), logger });
    try {
      puller.start();
      await store.handOffWork(keyOf('long'), encodeWorkItem(item('long')));
      await longStarted.promise;
      await store.handOffWork(keyOf('waiting'), encodeWorkItem(item('waiting')));
      // The sweep, while the worker is full.
      await recoverStalledWork({ store, worker, now: Date.now, graceMs: 30_000, logger });
      // SIGTERM: bot.stop() stops the puller, then waits for the running turns.
      await puller.stop();
      longMayEnd.resolve();
      await worker.idle();
      expect({ handled: [...handled], stillQueued: await store.busyThreads({ limit: 10 }) }).toEqual({ handled: ['long'], stillQueued: [keyOf('waiting')] });
    } finally {
      longMayEnd.resolve();
      await puller.stop();
      await worker.idle();
      await store.close();
    }
  });
});
