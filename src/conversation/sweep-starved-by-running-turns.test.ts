import { randomUUID } from 'node:crypto';
import { pino } from 'pino';
import { describe, expect, inject, it } from 'vitest';
import { createRedisStore } from '../store/redis-store.js';
import { recoverStalledWork } from './recover-stalled-work.js';
import { createThreadWorker } from './thread-worker.js';
import { encodeWorkItem, type WorkItem } from './work-item.js';

const item = (threadTs: string): WorkItem => ({ kind: 'message', userId: 'U1', text: 'hi', ts: threadTs, teamId: 'T1', channel: 'C1', threadTs, readEarlierMessages: false });
const keyOf = (threadTs: string) => `T1:C1:${threadTs}`;

function deferred<T = void>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((done) => (resolve = done));
  return { promise, resolve };
}

/**
 * README, "Receivers and workers": "A lost hand-off costs latency, not work: every worker's sweep
 * finds threads whose work has waited longer than the lock TTL with no live lock, and takes as many
 * as it has room for."
 *
 * The sweep (`recoverStalledWork`) reads the 20 threads of the busy index with the OLDEST queue time
 * (`busyThreads({ limit: 20, before })`), whether or not their lock is live, and stops there. A thread
 * running a long turn (a slow model, a deploy command: minutes) keeps the score of when its work was
 * queued, so 20 such live turns fill every batch: each sweep tries to lock those 20, is refused, and
 * never looks at a thread whose hand-off was lost (a worker that popped its hint and was killed)
 * behind them. The approved call then waits, silently, for as long as long turns keep running.
 */
describe('the recovery sweep while 20 older threads run long turns on a live worker', () => {
  it('still recovers a newer thread whose hand-off was lost', async () => {
    const prefix = `test:${randomUUID()}:`;
    const logger = pino({ level: 'silent' });
    // The receiver's clock: hand-offs scored minutes ago, all well past the sweep's grace.
    let receiverClock = Date.now() - 10 * 60_000;
    const receiver = createRedisStore({ url: inject('redisUrl'), keyPrefix: prefix, now: () => receiverClock });
    const storeA = createRedisStore({ url: inject('redisUrl'), keyPrefix: prefix });
    const storeB = createRedisStore({ url: inject('redisUrl'), keyPrefix: prefix });
    const longMayEnd = deferred();
    const handledByB: string[] = [];
    let longStarted = 0;
    const allLongStarted = deferred();
    const LONG = 20;
    // Worker A: alive, running 20 long turns (its locks renewed by its heartbeats).
    const workerA = createThreadWorker({
      store: storeA,
      logger,
      lockTtlMs: 3_000,
      handle: async () => {
        longStarted += 1;
        if (longStarted === LONG) allLongStarted.resolve();
        await longMayEnd.promise;
      },
    });
    // Worker B: idle, full of room; only its sweep runs here.
    const workerB = createThreadWorker({ store: storeB, logger, lockTtlMs: 3_000, handle: async (work) => void handledByB.push(work.threadTs) });
    try {
      for (let index = 0; index < LONG; index += 1) {
        await receiver.handOffWork(keyOf(`long${index}`), encodeWorkItem(item(`long${index}`)));
        receiverClock += 1_000;
      }
      // Handed off after them (still minutes ago): its hint is popped by a worker that then died.
      await receiver.handOffWork(keyOf('lost'), encodeWorkItem(item('lost')));
      const popped: string[] = [];
      while (popped.length < LONG + 1) popped.push(...(await storeA.nextReadyThreads({ timeoutMs: 1_000, max: 32 })));
      expect(popped).toContain(keyOf('lost'));
      // Worker A takes the 20 long ones, as its puller would; the lost one's hint is gone.
      for (let index = 0; index < LONG; index += 1) void workerA.pickUp(keyOf(`long${index}`));
      await allLongStarted.promise;

      // B's sweep, well past the grace for every one of them.
      await recoverStalledWork({ store: storeB, worker: workerB, now: Date.now, graceMs: 3_000, logger });
      await workerB.idle();

      expect({ handledByB, stillQueued: (await storeB.busyThreads({ limit: 100 })).includes(keyOf('lost')) }).toEqual({ handledByB: ['lost'], stillQueued: false });
    } finally {
      longMayEnd.resolve();
      await workerA.idle();
      await workerB.idle();
      await receiver.close();
      await storeA.close();
      await storeB.close();
    }
  });
});
