import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { createMemoryStore } from '../store/memory-store.js';
import { FencedError } from '../store/fenced-error.js';
import type { StateStore } from '../store/state-store.js';
import { createLoadGate, createLoadMonitor } from './load-gate.js';
import { createThreadWorker } from './thread-worker.js';
import { encodeWorkItem, type WorkItem } from './work-item.js';

const item = (threadTs: string): WorkItem => ({ kind: 'retry', failureId: 'f1', clickedBy: 'U1', teamId: 'T1', channel: 'C1', threadTs });

describe('thread worker', () => {
  it('handles items of one thread in order, one at a time, and different threads side by side up to the cap', async () => {
    let active = 0;
    let peak = 0;
    const handled: string[] = [];
    const worker = createThreadWorker({
      store: createMemoryStore(),
      logger: pino({ level: 'silent' }),
      gate: createLoadGate({ monitor: createLoadMonitor(), maxConcurrent: 3, maxEventLoopDelayMs: 10_000 }),
      handle: async (work) => {
        active += 1;
        peak = Math.max(peak, active);
        await new Promise((resolve) => setTimeout(resolve, 10));
        if (work.kind === 'retry') handled.push(work.threadTs);
        active -= 1;
      },
    });
    await Promise.all([
      ...Array.from({ length: 10 }, (_, index) => worker.submit(`T1:C1:${index}`, item(String(index)))),
      worker.submit('T1:C1:0', item('0-second')),
    ]);
    await worker.idle();
    expect(handled).toHaveLength(11);
    expect(peak).toBe(3);
    expect(handled.indexOf('0')).toBeLessThan(handled.indexOf('0-second'));
  });
});

describe("thread worker picking up a thread", () => {
  it('hands what the pick-up read with the lock to the first item only', async () => {
    const store = createMemoryStore();
    const read = { stepId: 's1', step: undefined, thread: undefined };
    const picking: StateStore = { ...store, lockAndTake: async (threadKey, ttlMs) => ({ ...(await store.lockAndTake(threadKey, ttlMs))!, read }) };
    const seen: unknown[] = [];
    const worker = createThreadWorker({ store: picking, logger: pino({ level: 'silent' }), handle: async (_work, _lease, prefetched) => void seen.push(prefetched) });
    await store.handOffWork('T1:C1:1', encodeWorkItem(item('first')));
    await store.handOffWork('T1:C1:1', encodeWorkItem(item('second')));
    expect(await worker.pickUp('T1:C1:1')).toBe(true);
    expect(seen).toEqual([read, undefined]);
  });

  it("says a thread the recovery sweep took is recovered, and one picked up or submitted is not", async () => {
    const store = createMemoryStore();
    const recovered: Record<string, boolean> = {};
    const worker = createThreadWorker({ store, logger: pino({ level: 'silent' }), handle: async (work, lease) => void (recovered[work.threadTs] = lease.recovered === true) });
    await store.handOffWork('T1:C1:1', encodeWorkItem(item('swept')));
    await store.handOffWork('T1:C1:2', encodeWorkItem(item('pulled')));
    expect(await worker.startPickUp('T1:C1:1')).toBe(true);
    expect(await worker.pickUp('T1:C1:2')).toBe(true);
    await worker.submit('T1:C1:3', item('submitted'));
    await worker.idle();
    expect(recovered).toEqual({ swept: true, pulled: false, submitted: false });
  });

  it('says a thread taken with an item a lapsed holder left in flight is recovered, whatever took the lock, and so is what the sweep submits', async () => {
    let clock = 1_000_000;
    const store = createMemoryStore({ now: () => clock });
    const recovered: Record<string, boolean> = {};
    const worker = createThreadWorker({ store, logger: pino({ level: 'silent' }), handle: async (work, lease) => void (recovered[work.threadTs] = lease.recovered === true) });
    // Three holders that died with their item in flight (taken with the lock, never finished).
    for (const threadTs of ['left-1', 'left-2', 'left-3']) await store.enqueueWork(`T1:C1:${threadTs}`, encodeWorkItem(item(threadTs)), 1_000);
    clock += 1_001;
    await worker.submit('T1:C1:left-1', item('new-message'));
    expect(await worker.pickUp('T1:C1:left-2')).toBe(true);
    const decided = await store.enqueueWork('T1:C1:left-3', encodeWorkItem(item('decision')), 30_000);
    await worker.drainClaimed('T1:C1:left-3', { ...decided!, askedAt: clock });
    await worker.submit('T1:C1:4', item('resume-nobody-ran'), { recovered: true });
    await worker.idle();
    // The drain that took a left-over item runs the items after it under the same lease.
    expect(recovered).toEqual({ 'left-1': true, 'new-message': true, 'left-2': true, 'left-3': true, decision: true, 'resume-nobody-ran': true });
  });
});

describe('thread worker when the store goes away mid-item (a Redis restart)', () => {
  const QUEUE_METHODS = ['takeWork', 'finishWork', 'takeLeftover', 'releaseLockIfIdle', 'extendLock', 'enqueueWork', 'tryLock', 'lockAndTake'] as const;

  const waitUntil = async (condition: () => boolean) => {
    while (!condition()) await new Promise((resolve) => setTimeout(resolve, 5));
  };

  /**
   * Submits an item whose turn ends as the store goes away, so the queue bookkeeping after it fails:
   * the store's queue methods fail while `state.down`, as Redis's do while it restarts.
   */
  function itemEndingInOutage(threadKey: string, options: { lockTtlMs?: number } = {}) {
    const store = createMemoryStore();
    const state = { down: false, lockLost: false, failures: 0 };
    const outage: StateStore = { ...store };
    for (const method of QUEUE_METHODS) {
      (outage as any)[method] = async (...args: unknown[]) => {
        if (state.down) {
          state.failures += 1;
          throw new Error('connect ECONNREFUSED');
        }
        if (method === 'extendLock' && state.lockLost) return 'taken';
        return (store as any)[method](...args);
      };
    }
    const handled: string[] = [];
    const worker = createThreadWorker({
      store: outage,
      logger: pino({ level: 'silent' }),
      ...options,
      handle: async (work) => {
        if (work.kind !== 'retry') return;
        handled.push(work.threadTs);
        if (work.threadTs === 'first') state.down = true;
      },
    });
    const first = worker.submit(threadKey, item('first'));
    return { store, state, worker, handled, first, failing: waitUntil(() => state.failures > 0) };
  }

  it('keeps the thread, finishes the item once when the store is back, handles what came meanwhile and releases the lock', async () => {
    const { store, state, worker, handled, first, failing } = itemEndingInOutage('T1:C1:1');
    await failing;
    state.down = false;
    await worker.submit('T1:C1:1', item('second'));
    await first;
    await worker.idle();
    expect(handled).toEqual(['first', 'second']);
    expect(await store.takeLeftover('T1:C1:1')).toBeUndefined();
    expect(await store.tryLock('T1:C1:1', 1_000)).toBeDefined();
  });

  it('stops draining if the lock was lost meanwhile, leaving the item for recovery', async () => {
    const { store, state, handled, first, failing } = itemEndingInOutage('T1:C1:2');
    await failing;
    state.lockLost = true;
    state.down = false;
    await first;
    expect(handled).toEqual(['first']);
    expect(await store.takeLeftover('T1:C1:2')).toBeDefined();
  });

  it('gives up once the lock would have lapsed, leaving the item for recovery', async () => {
    const { store, state, handled, first } = itemEndingInOutage('T1:C1:3', { lockTtlMs: 300 });
    await first;
    expect(handled).toEqual(['first']);
    state.down = false;
    expect(await store.takeLeftover('T1:C1:3')).toBeDefined();
  });
});

describe('thread worker running a claim taken earlier', () => {
  it('does not take a lock it asked for longer ago than the TTL for held: a successor may have it', async () => {
    const store = createMemoryStore();
    const threadKey = 'T1:C1:stalled';
    const lockTtlMs = 1_000;
    // The decision's write took the lock; then the process stalled past the TTL, and another process
    // took the thread over (a newer token) before this one got to run its claim.
    const askedAt = Date.now() - 3 * lockTtlMs;
    const stale = (await store.enqueueWork(threadKey, encodeWorkItem(item('resume')), 10))!;
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(await store.tryLock(threadKey, 60_000)).toBeDefined();
    const effects: string[] = [];
    const worker = createThreadWorker({
      store,
      logger: pino({ level: 'silent' }),
      lockTtlMs,
      handle: async (_work, lease) => {
        // What guards a Slack post: without a round trip only while the lock cannot have lapsed.
        await lease.assertHeld();
        effects.push('posted');
      },
    });
    await worker.drainClaimed(threadKey, { ...stale, askedAt });
    expect(effects).toEqual([]);
  });
});

describe('thread worker ending an item whose closing save another process made sure is never written', () => {
  /** One item whose handling posted something its closing save records, and asks for it to be taken back. */
  async function endItem(options: { finishWork?: StateStore['finishWork']; fenceState?: StateStore['fenceState']; loseLease?: boolean }) {
    const store = createMemoryStore();
    const takenBack: string[] = [];
    const worker = createThreadWorker({
      store: {
        ...store,
        ...(options.finishWork ? { finishWork: options.finishWork } : {}),
        ...(options.fenceState ? { fenceState: options.fenceState } : {}),
      },
      logger: pino({ level: 'silent' }),
      handle: async (_work, lease) => {
        // Learns (a renewal, a check before a post) that another process has the thread.
        if (options.loseLease) await lease.assertCurrent().catch(() => {});
        return {
          closing: { thread: { threadKey: 'T1:C1:end' } as never, ttlMs: 1_000 },
          takeBack: async () => void takenBack.push('answer'),
        };
      },
    });
    await worker.submit('T1:C1:end', item('end'));
    await worker.idle();
    return takenBack;
  }

  it('takes back what the item did when its finish is refused as fenced: the new holder shows it again', async () => {
    expect(await endItem({ finishWork: async (fence) => Promise.reject(new FencedError(fence.threadKey)) })).toEqual(['answer']);
  });

  it('takes back what the item did when the lease was lost before the finish was sent', async () => {
    expect(await endItem({ fenceState: async () => 'taken', loseLease: true })).toEqual(['answer']);
  });

  it("keeps it when Redis lost the thread's state (its token is gone, nobody else's in its place): nobody would show it again", async () => {
    expect(await endItem({ fenceState: async () => 'missing', loseLease: true })).toEqual([]);
    expect(await endItem({ finishWork: async (fence) => Promise.reject(new FencedError(fence.threadKey)), fenceState: async () => 'missing' })).toEqual([]);
  });

  it('keeps it when the finish is written', async () => {
    expect(await endItem({ finishWork: async () => undefined })).toEqual([]);
  });

  it('names its closing save the same at every try: a retry after a try that landed with its reply lost is answered as written, and it is kept', async () => {
    const attempts: Array<string | undefined> = [];
    const finishWork: StateStore['finishWork'] = async (_fence, _finished, _ttl, _closing, named) => {
      attempts.push(named?.attempt);
      // The first try landed, its reply lost; the store knows the retry's save by its name.
      if (attempts.length === 1) throw new Error('read ECONNRESET');
      return undefined;
    };
    expect(await endItem({ finishWork })).toEqual([]);
    expect(attempts).toEqual([expect.any(String), attempts[0]]);
  });

  it('takes it back when a retry is refused as fenced: no try of the named save was written', async () => {
    let tries = 0;
    const finishWork: StateStore['finishWork'] = async (fence) => {
      tries += 1;
      throw tries === 1 ? new Error('read ECONNRESET') : new FencedError(fence.threadKey);
    };
    expect(await endItem({ finishWork })).toEqual(['answer']);
    expect(tries).toBe(2);
  });
});
