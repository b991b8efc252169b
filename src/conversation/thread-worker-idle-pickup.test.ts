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

/** A store whose lockAndTake answers only once `answer` resolves (`asked` once it is sent), and whose hand-backs are logged. */
async function slowTake(events: string[]) {
  const memory = createMemoryStore();
  // A receiver handed the thread off; the puller's pickUp sends its lockAndTake.
  await memory.handOffWork(THREAD, encodeWorkItem(item('handed off')));
  // The puller took its hint from the ready list.
  expect(await memory.nextReadyThreads({ timeoutMs: 1_000, max: 5 })).toEqual([THREAD]);
  const asked = deferred();
  const answer = deferred();
  const store: StateStore = {
    ...memory,
    lockAndTake: async (...args) => {
      asked.resolve();
      await answer.promise;
      return memory.lockAndTake(...args);
    },
    releaseLockIfIdle: async (fence, ttl, options) => {
      const released = await memory.releaseLockIfIdle(fence, ttl, options);
      if (options?.handBack) events.push('handed back');
      return released;
    },
  };
  return { memory, store, asked, answer };
}

describe('ThreadWorker.idle and a pick-up whose lock take is on its way (the puller does not await pickUp)', () => {
  it('waits in idle for a pickUp nobody awaits until its drain ends, so the store is not closed under the turn it starts', async () => {
    const events: string[] = [];
    const { store, asked, answer } = await slowTake(events);
    const worker = createThreadWorker({ store, logger: silent, handle: async () => void events.push('turn ran') });
    // As work-puller.ts does: not awaited.
    const picked = worker.pickUp(THREAD);
    await asked.promise;
    const idle = worker.idle().then(() => events.push('idle'));
    answer.resolve();
    await Promise.all([idle, picked]);
    expect(events, 'idle resolved (and the stop would close the store) before the drain the pick-up started ran').toEqual(['turn ran', 'idle']);
  });

  it('hands the thread back, its item not started, when the lock take answers after the stop; idle waits for that', async () => {
    const events: string[] = [];
    const { memory, store, asked, answer } = await slowTake(events);
    const worker = createThreadWorker({ store, logger: silent, handle: async () => void events.push('turn ran') });
    const picked = worker.pickUp(THREAD);
    await asked.promise;
    // SIGTERM while the puller's lock take is on its way.
    worker.stopTaking();
    const idle = worker.idle().then(() => events.push('idle'));
    answer.resolve();
    await Promise.all([idle, picked]);
    expect(events, 'the stopping process started a turn a pick-up took after SIGTERM, or idle did not wait for its hand-back').toEqual(['handed back', 'idle']);
    // Left in flight for a live worker, which is offered the thread at once.
    expect(decodeWorkItem((await memory.takeLeftover(THREAD)) ?? '')).toMatchObject({ threadTs: 'handed off' });
    expect(await memory.nextReadyThreads({ timeoutMs: 1_000, max: 5 })).toEqual([THREAD]);
    const live = createThreadWorker({ store: memory, logger: silent, handle: async () => void events.push('live turn ran') });
    expect(await live.pickUp(THREAD)).toBe(true);
    expect(events).toEqual(['handed back', 'idle', 'live turn ran']);
  });
});
