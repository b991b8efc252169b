import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { createMemoryStore } from '../store/memory-store.js';
import { recoverStalledWork } from './recover-stalled-work.js';
import { createThreadWorker } from './thread-worker.js';
import { encodeWorkItem, type WorkItem } from './work-item.js';

const logger = pino({ level: 'silent' });
const GRACE_MS = 30_000;
const item = (threadTs: string): WorkItem => ({ kind: 'message', userId: 'U1', text: 'hi', ts: threadTs, teamId: 'T1', channel: 'C1', threadTs, readEarlierMessages: false });

/** A store whose clock the test moves, a worker with room, and one thread handed off at time 0 whose hint nobody took. */
async function world() {
  let at = 1_000_000;
  const store = createMemoryStore({ now: () => at });
  const handled: string[] = [];
  const worker = createThreadWorker({ store, logger, handle: async (work) => void handled.push(work.threadTs) });
  await store.handOffWork('T1:C1:1.1', encodeWorkItem(item('1.1')));
  const sweep = async (stopping?: AbortSignal) => {
    await recoverStalledWork({ store, worker, now: () => at, graceMs: GRACE_MS, logger, ...(stopping ? { stopping } : {}) });
    // The sweep returns once its threads are locked: their drains are what `idle` waits for.
    await worker.idle();
  };
  return { store, handled, sweep, later: (ms: number) => void (at += ms) };
}

describe('the recovery sweep of a worker with room', () => {
  it('leaves a thread just handed off to the ready list, and takes it once its work has waited past the grace', async () => {
    const { store, handled, sweep, later } = await world();
    later(GRACE_MS - 1);
    await sweep();
    expect({ handled: [...handled], busy: await store.busyThreads({ limit: 10 }) }).toEqual({ handled: [], busy: ['T1:C1:1.1'] });
    later(1);
    await sweep();
    expect({ handled: [...handled], busy: await store.busyThreads({ limit: 10 }) }).toEqual({ handled: ['1.1'], busy: [] });
  });

  it('takes nothing once the worker is stopping', async () => {
    const { store, handled, sweep, later } = await world();
    later(GRACE_MS);
    const stopping = new AbortController();
    stopping.abort();
    await sweep(stopping.signal);
    expect({ handled: [...handled], busy: await store.busyThreads({ limit: 10 }) }).toEqual({ handled: [], busy: ['T1:C1:1.1'] });
  });
});
