import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { deferred } from '../../test/helpers/deferred.js';
import { createMemoryStore } from '../store/memory-store.js';
import type { StateStore } from '../store/state-store.js';
import { createThreadWorker } from './thread-worker.js';
import { decodeWorkItem, encodeWorkItem, type WorkItem } from './work-item.js';

const silent = pino({ level: 'silent' });
const item = (threadTs: string): WorkItem => ({ kind: 'retry', failureId: 'f1', clickedBy: 'U1', teamId: 'T1', channel: 'C1', threadTs });
const THREAD = 'T1:C1:1';

/** A worker on a memory store whose items (a retry recording its threadTs) each run until `mayEnd` resolves (`running` once one started). */
function heldWorker() {
  const store = createMemoryStore();
  const running = deferred();
  const mayEnd = deferred();
  const handled: string[] = [];
  const worker = createThreadWorker({
    store,
    logger: silent,
    handle: async (work) => {
      if (work.kind === 'retry') handled.push(work.threadTs);
      running.resolve();
      await mayEnd.promise;
    },
  });
  return { store, running, mayEnd, handled, worker };
}

describe('thread worker told to stop (SIGTERM)', () => {
  it("ends its running item, then hands the thread back: the next item left queued and offered to a live worker, which runs it", async () => {
    const { store, running, mayEnd, handled, worker } = heldWorker();
    const drained = worker.submit(THREAD, item('first'));
    await running.promise;
    worker.stopTaking();
    // Queued behind the running turn by a live replica, after the stop began.
    expect(await store.enqueueWork(THREAD, encodeWorkItem(item('second')), 60_000)).toBeUndefined();
    mayEnd.resolve();
    await drained;
    await worker.idle();
    expect(handled).toEqual(['first']);
    // Offered at once, not left to a recovery sweep's grace: a live worker takes it from the ready list.
    expect(await store.nextReadyThreads({ timeoutMs: 1_000, max: 5 })).toEqual([THREAD]);
    const live = createThreadWorker({ store, logger: silent, handle: async (work) => void (work.kind === 'retry' && handled.push(`live:${work.threadTs}`)) });
    expect(await live.pickUp(THREAD)).toBe(true);
    expect(handled).toEqual(['first', 'live:second']);
  });

  it('still runs the item its own submit took with the lock (a request acked before the stop), but not the one queued behind it', async () => {
    const { store, running, mayEnd, handled, worker } = heldWorker();
    worker.stopTaking();
    const drained = worker.submit(THREAD, item('acked'), { fromRequest: true });
    await running.promise;
    expect(await store.enqueueWork(THREAD, encodeWorkItem(item('queued behind')), 60_000)).toBeUndefined();
    mayEnd.resolve();
    await drained;
    await worker.idle();
    expect(handled).toEqual(['acked']);
    expect(await store.nextReadyThreads({ timeoutMs: 1_000, max: 5 })).toEqual([THREAD]);
    expect(decodeWorkItem((await store.lockAndTake(THREAD, 60_000))?.item ?? '')).toMatchObject({ threadTs: 'queued behind' });
  });

  it('hands back work queued while its drain was releasing an empty queue', async () => {
    const memory = createMemoryStore();
    const handled: string[] = [];
    let worker: ReturnType<typeof createThreadWorker> | undefined;
    // The queue is found empty (takeWork), then work arrives and the stop begins before the release.
    const store: StateStore = {
      ...memory,
      takeWork: async (fence) => {
        const taken = await memory.takeWork(fence);
        if (taken === undefined) {
          await memory.enqueueWork(THREAD, encodeWorkItem(item('arrived')), 60_000);
          worker?.stopTaking();
        }
        return taken;
      },
    };
    worker = createThreadWorker({ store, logger: silent, handle: async (work) => void (work.kind === 'retry' && handled.push(work.threadTs)) });
    // A pick-up that finds the queue already drained (a hint outlived its work): its lock comes with no item.
    expect(await worker.pickUp(THREAD)).toBe(true);
    await worker.idle();
    expect(handled).toEqual([]);
    expect(await memory.nextReadyThreads({ timeoutMs: 1_000, max: 5 })).toEqual([THREAD]);
  });

  it("waits in idle for a submit nobody awaits (a scheduled turn, a recovered resume) until its item is queued, so the store does not close under it", async () => {
    const memory = createMemoryStore();
    const asked = deferred();
    const answer = deferred();
    const events: string[] = [];
    const store: StateStore = {
      ...memory,
      enqueueWork: async (...args) => {
        asked.resolve();
        await answer.promise;
        const claim = await memory.enqueueWork(...args);
        events.push('queued');
        return claim;
      },
    };
    const worker = createThreadWorker({ store, logger: silent, handle: async () => {} });
    void worker.submit(THREAD, item('scheduled'));
    await asked.promise;
    const idle = worker.idle().then(() => events.push('idle'));
    answer.resolve();
    await idle;
    expect(events).toEqual(['queued', 'idle']);
  });
});
