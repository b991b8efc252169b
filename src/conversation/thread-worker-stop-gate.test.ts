import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { deferred } from '../../test/helpers/deferred.js';
import { createAdmissionGate } from '../runtime/admission-gate.js';
import { createMemoryStore } from '../store/memory-store.js';
import type { StateStore } from '../store/state-store.js';
import { createThreadWorker } from './thread-worker.js';
import { decodeWorkItem, encodeWorkItem, type WorkItem } from './work-item.js';

const silent = pino({ level: 'silent' });
const item = (threadTs: string): WorkItem => ({ kind: 'retry', failureId: 'f1', clickedBy: 'U1', teamId: 'T1', channel: 'C1', threadTs });
const X = 'T1:C1:x';
const Y = 'T1:C1:y';

describe('a stopping worker whose next item waits on a full load gate', () => {
  it('does not start, after SIGTERM, a turn it took before the stop but had not started (it waited for room)', async () => {
    const store = createMemoryStore();
    // One turn at a time: the process is full.
    const gate = createAdmissionGate({ maxConcurrent: 1, loaded: () => false });
    const started = new Map<string, ReturnType<typeof deferred>>();
    const mayEnd = new Map<string, ReturnType<typeof deferred>>();
    for (const name of ['A', 'B', 'C']) {
      started.set(name, deferred());
      mayEnd.set(name, deferred());
    }
    const handled: string[] = [];
    const worker = createThreadWorker({
      store,
      logger: silent,
      gate,
      handle: async (work) => {
        if (work.kind !== 'retry') return;
        handled.push(work.threadTs);
        started.get(work.threadTs)?.resolve();
        await mayEnd.get(work.threadTs)?.promise;
      },
    });
    // Thread X runs turn A; message B is queued behind it.
    const drainX = worker.submit(X, item('A'));
    await started.get('A')!.promise;
    expect(await store.enqueueWork(X, encodeWorkItem(item('B')), 60_000)).toBeUndefined();
    // Thread Y's turn C waits for room.
    const drainY = worker.submit(Y, item('C'));
    while (gate.waiting() < 1) await new Promise((resolve) => setImmediate(resolve));
    // A ends: C gets the room, X's finish takes B, which now waits for room.
    mayEnd.get('A')!.resolve();
    await started.get('C')!.promise;
    while (gate.waiting() < 1) await new Promise((resolve) => setImmediate(resolve));
    // SIGTERM: B has not started; it is a new turn the stop would cut.
    worker.stopTaking();
    mayEnd.get('C')!.resolve();
    mayEnd.get('B')!.resolve();
    await Promise.all([drainX, drainY]);
    await worker.idle();
    // B should have been handed back for a live replica, not started here after the stop.
    expect(handled, 'the stopping process started turn B (taken before SIGTERM, not started until after)').toEqual(['A', 'C']);
    expect(await store.nextReadyThreads({ timeoutMs: 1_000, max: 5 })).toEqual([X]);
    // B stays in flight, never started, for the next holder first; its place at the gate was given up.
    expect(decodeWorkItem((await store.takeLeftover(X)) ?? '')).toMatchObject({ threadTs: 'B' });
    expect(gate.active()).toBe(0);
    expect(gate.waiting()).toBe(0);
  });

  it('does not start, after SIGTERM, the next item a finish sent before the stop took (its reply came after)', async () => {
    const memory = createMemoryStore();
    const finishSent = deferred();
    const replyMay = deferred();
    const store: StateStore = {
      ...memory,
      finishWork: async (...args) => {
        const next = await memory.finishWork(...args);
        finishSent.resolve();
        await replyMay.promise;
        return next;
      },
    };
    const handled: string[] = [];
    const aRunning = deferred();
    const aMayEnd = deferred();
    const worker = createThreadWorker({
      store,
      logger: silent,
      handle: async (work) => {
        if (work.kind !== 'retry') return;
        handled.push(work.threadTs);
        aRunning.resolve();
        await aMayEnd.promise;
      },
    });
    const drain = worker.submit(X, item('A'));
    await aRunning.promise;
    expect(await memory.enqueueWork(X, encodeWorkItem(item('B')), 60_000)).toBeUndefined();
    // A's finish takes B; its reply is on its way when SIGTERM comes.
    aMayEnd.resolve();
    await finishSent.promise;
    worker.stopTaking();
    replyMay.resolve();
    await drain;
    await worker.idle();
    expect(handled, 'the stopping process started turn B (taken by a finish sent before SIGTERM)').toEqual(['A']);
    expect(decodeWorkItem((await memory.takeLeftover(X)) ?? '')).toMatchObject({ threadTs: 'B' });
    expect(await memory.nextReadyThreads({ timeoutMs: 1_000, max: 5 })).toEqual([X]);
  });
});
