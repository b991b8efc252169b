import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { createMemoryStore } from '../store/memory-store.js';
import { createThreadWorker } from './thread-worker.js';
import { encodeWorkItem, type WorkItem } from './work-item.js';

const silent = pino({ level: 'silent' });
const THREAD = 'T1:C1:1';
const resume: WorkItem = { kind: 'resume', stepId: 'a'.repeat(40), channel: 'C1', threadTs: '1' };

/**
 * A claim a store write took for this process (a completing click's decision, an expiry) is drawn
 * on its card before `drainClaimed` runs it: `claimTaken` counts it for `idle` from the write on.
 */
describe('a claim counted from its write (claimTaken)', () => {
  it('is waited for by idle until drainClaimed has run it', async () => {
    const store = createMemoryStore();
    const order: string[] = [];
    const worker = createThreadWorker({ store, logger: silent, handle: async (work) => void order.push(work.kind) });
    const own = encodeWorkItem(resume);
    const claim = worker.claimTaken(THREAD, { ...(await store.enqueueWork(THREAD, own, 60_000))!, askedAt: Date.now(), request: own });
    const idling = worker.idle().then(() => void order.push('idle'));
    // The card is drawn meanwhile (a store round trip stands in for its Slack call), then the drain begins.
    await store.getStep('card');
    await worker.drainClaimed(THREAD, claim);
    await idling;
    expect(order, 'idle resolved while a claim taken for this process waited for its drain').toEqual(['resume', 'idle']);
  });

  it('is handed back, not left locked, when a stopping idle finds it not yet drained; its late drainClaimed runs nothing', async () => {
    const store = createMemoryStore();
    const handled: string[] = [];
    const worker = createThreadWorker({ store, logger: silent, handle: async (work) => void handled.push(work.kind) });
    const own = encodeWorkItem(resume);
    const claim = worker.claimTaken(THREAD, { ...(await store.enqueueWork(THREAD, own, 60_000))!, askedAt: Date.now(), request: own });
    worker.stopTaking();
    await worker.idle();
    expect(await store.nextReadyThreads({ timeoutMs: 1_000, max: 5 })).toContain(THREAD);
    // The card's draw ends after the stop gave up on it: the thread is another process's now.
    await worker.drainClaimed(THREAD, claim);
    expect(handled).toEqual([]);
    const live = createThreadWorker({ store, logger: silent, handle: async (work) => void handled.push(`live:${work.kind}`) });
    expect(await live.pickUp(THREAD)).toBe(true);
    expect(handled).toEqual(['live:resume']);
  });

  it('is handed back at once, never counted, when taken after a stopping idle began: idle ends with the running drain', async () => {
    const store = createMemoryStore();
    const handled: string[] = [];
    let release = () => {};
    const blocked = new Promise<void>((resolve) => (release = resolve));
    let started = () => {};
    const running = new Promise<void>((resolve) => (started = resolve));
    const worker = createThreadWorker({
      store,
      logger: silent,
      handle: async (work) => {
        handled.push(work.channel);
        started();
        await blocked;
      },
    });
    // Another thread's turn is running when the stop comes: the stopping idle waits for it.
    const other = encodeWorkItem({ ...resume, channel: 'C2' });
    const turn = worker.drainClaimed('T1:C2:1', worker.claimTaken('T1:C2:1', { ...(await store.enqueueWork('T1:C2:1', other, 60_000))!, askedAt: Date.now(), request: other }));
    await running;
    worker.stopTaking();
    const idling = worker.idle();
    // A form's decision lands meanwhile (its request outlasted the stop's wait), and its listener never drains it.
    const own = encodeWorkItem(resume);
    worker.claimTaken(THREAD, { ...(await store.enqueueWork(THREAD, own, 60_000))!, askedAt: Date.now(), request: own });
    release();
    await turn;
    await idling;
    expect(handled, 'the late claim was run by a stopping process').toEqual(['C2']);
    expect(await store.nextReadyThreads({ timeoutMs: 1_000, max: 5 })).toContain(THREAD);
  }, 5_000);
});
