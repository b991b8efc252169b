import { pino } from 'pino';
import { randomUUID } from 'node:crypto';
import { describe, expect, inject, it } from 'vitest';
import { deferred } from '../../test/helpers/deferred.js';
import { createMemoryStore } from '../store/memory-store.js';
import { createRedisStore } from '../store/redis-store.js';
import type { StateStore } from '../store/state-store.js';
import { createThreadWorker } from './thread-worker.js';
import { decodeWorkItem, encodeWorkItem, type WorkItem } from './work-item.js';

const silent = pino({ level: 'silent' });
const retry = (threadTs: string): WorkItem => ({ kind: 'retry', failureId: 'f1', clickedBy: 'U1', teamId: 'T1', channel: 'C1', threadTs });
const THREAD = 'T1:C1:1';

/**
 * Once stopping, a drain's first item runs only if it is the very item this process's own acked
 * request queued (`submit`'s `fromRequest`, `TakenClaim.request`). An enqueue that takes a free lock
 * takes the thread's oldest work first (ENQUEUE_AND_LOCK_SCRIPT's takeItem: the in-flight leftover,
 * else the queue's head): a thread this very process just handed back (its lock free, a replica's
 * message queued, the hint waiting for a live worker) is taken again by the next request this
 * process acked before it stopped listening (the stop waits up to 10 s for those). The replica's
 * turn it took is not this process's to start: the thread is handed back again, both items left
 * for a live worker.
 */
describe.each([
  ['memory', () => createMemoryStore()],
  ['redis', () => createRedisStore({ url: inject('redisUrl'), keyPrefix: `stop-handback:${randomUUID()}:` })],
] as const)('a stopping worker whose own acked request takes a thread it just handed back (%s)', (_name, makeStore) => {
  it("does not start the turn another replica queued there (only its own request's, or none)", async () => {
    const store: StateStore = makeStore();
    const aRunning = deferred();
    const aMayEnd = deferred();
    const handled: string[] = [];
    const worker = createThreadWorker({
      store,
      logger: silent,
      handle: async (work) => {
        if (work.kind !== 'retry') return;
        handled.push(work.threadTs);
        if (work.threadTs === 'A') {
          aRunning.resolve();
          await aMayEnd.promise;
        }
      },
    });
    // Turn A runs here; SIGTERM comes; a live replica queues B behind it.
    const drainA = worker.submit(THREAD, retry('A'));
    await aRunning.promise;
    worker.stopTaking();
    expect(await store.enqueueWork(THREAD, encodeWorkItem(retry('B (queued by the replica)')), 60_000)).toBeUndefined();
    // A ends: the thread is handed back, B left queued and offered (as the stop intends).
    aMayEnd.resolve();
    await drainA;
    // A request this process acked before it stopped listening (a message, a click) reaches its
    // enqueue now, before a live worker took the hint.
    await worker.submit(THREAD, retry('M (acked here before the stop)'), { fromRequest: true });
    await worker.idle();
    try {
      expect(handled, "the stopping process started the turn a replica queued after SIGTERM (taken again by its own request's enqueue)").not.toContain('B (queued by the replica)');
      expect(handled).toEqual(['A']);
      // Offered again; a live worker runs both, B first (left in flight), then M.
      expect(await store.nextReadyThreads({ timeoutMs: 1_000, max: 5 })).toContain(THREAD);
      const live = createThreadWorker({ store, logger: silent, handle: async (work) => void (work.kind === 'retry' && handled.push(`live:${work.threadTs}`)) });
      expect(await live.pickUp(THREAD)).toBe(true);
      expect(handled).toEqual(['A', 'live:B (queued by the replica)', 'live:M (acked here before the stop)']);
    } finally {
      await store.close();
    }
  });
});

describe("a stopping worker draining a click's claim (drainClaimed: the decision's write took the lock)", () => {
  const resume = (stepId: string): WorkItem => ({ kind: 'resume', stepId: stepId.repeat(40), channel: 'C1', threadTs: '1' });

  it('runs the resume the click queued when the write took the lock with it', async () => {
    const store = createMemoryStore();
    const handled: string[] = [];
    const worker = createThreadWorker({ store, logger: silent, handle: async (work) => void (work.kind === 'resume' && handled.push(work.stepId)) });
    worker.stopTaking();
    const own = encodeWorkItem(resume('a'));
    const claim = (await store.enqueueWork(THREAD, own, 60_000))!;
    await worker.drainClaimed(THREAD, { ...claim, askedAt: Date.now(), request: own });
    await worker.idle();
    expect(handled).toEqual(['a'.repeat(40)]);
  });

  it("hands back a claim no request of this process's took (an expiry's resume, written as the stop came)", async () => {
    const store = createMemoryStore();
    const handled: string[] = [];
    const worker = createThreadWorker({ store, logger: silent, handle: async (work) => void (work.kind === 'resume' && handled.push(work.stepId)) });
    worker.stopTaking();
    const claim = (await store.enqueueWork(THREAD, encodeWorkItem(resume('c')), 60_000))!;
    await worker.drainClaimed(THREAD, { ...claim, askedAt: Date.now() });
    await worker.idle();
    expect(handled).toEqual([]);
    expect(decodeWorkItem((await store.takeLeftover(THREAD)) ?? '')).toMatchObject({ stepId: 'c'.repeat(40) });
  });

  it("hands back the thread's older work the write took first, and its own resume with it", async () => {
    const store = createMemoryStore();
    const handled: string[] = [];
    const worker = createThreadWorker({ store, logger: silent, handle: async (work) => void (work.kind === 'resume' && handled.push(work.stepId)) });
    worker.stopTaking();
    // Left by a holder whose lock lapsed: in flight, the lock free.
    const older = await store.enqueueWork(THREAD, encodeWorkItem(resume('b')), 60_000);
    expect(await store.releaseLockIfIdle({ threadKey: THREAD, token: older!.token }, 60_000, { handBack: true })).toBe('released');
    const own = encodeWorkItem(resume('a'));
    const claim = (await store.enqueueWork(THREAD, own, 60_000))!;
    expect(claim.item).not.toBe(own);
    await worker.drainClaimed(THREAD, { ...claim, askedAt: Date.now(), request: own });
    await worker.idle();
    expect(handled, "the stopping process started work its click's write took first, not the click's own resume").toEqual([]);
    expect(decodeWorkItem((await store.takeLeftover(THREAD)) ?? '')).toMatchObject({ stepId: 'b'.repeat(40) });
  });
});

/**
 * A pick-up's first item is handed back when its lock is answered after SIGTERM ("work another
 * process left"), and so is the recovery sweep's other way of taking such work, the resume of a
 * decided step nobody resumed (`recoverStalledWork`: `worker.submit(..., { recovered: true })`, not
 * awaited, no request of this process's): a sweep that called submit just before the stop, its
 * enqueue answered after it, leaves the resume (the approved call) to a live worker.
 */
describe('a recovered resume whose enqueue is answered after the stop', () => {
  it('is handed back like a pick-up, not started on the stopping process', async () => {
    const memory = createMemoryStore();
    const asked = deferred();
    const answer = deferred();
    const store: StateStore = {
      ...memory,
      enqueueWork: async (...args) => {
        asked.resolve();
        await answer.promise;
        return memory.enqueueWork(...args);
      },
    };
    const handled: string[] = [];
    const worker = createThreadWorker({ store, logger: silent, handle: async (work) => void handled.push(work.kind) });
    const resume: WorkItem = { kind: 'resume', stepId: 'a'.repeat(40), channel: 'C1', threadTs: '1' };
    // recoverStalledWork: the sweep checked `stopping` and called submit; its enqueue is on its way.
    const submitted = worker.submit(THREAD, resume, { recovered: true });
    await asked.promise;
    // SIGTERM.
    worker.stopTaking();
    answer.resolve();
    await submitted;
    await worker.idle();
    expect(handled, 'the stopping process started the resume of an approved call the sweep recovered (its enqueue answered after SIGTERM)').toEqual([]);
    expect(decodeWorkItem((await memory.takeLeftover(THREAD)) ?? '')).toMatchObject({ kind: 'resume' });
  });
});

/**
 * The same for a scheduled turn: bot.stop() sends worker.stopTaking(), then schedules.stop(), which
 * waits for a firing under way (claim, Slack post, thread creation, submit). That firing's submit
 * comes after SIGTERM; its enqueue takes the new thread's free lock, but the stopping process must
 * not start the scheduled turn (a new thread: README "finishes its turns but starts no new thread"),
 * which its stop would then wait for or the orchestrator's SIGKILL cut (an auto-approved command
 * "interrupted, never run again"): it is left to a live replica, which runs it in full.
 */
describe('a scheduled firing under way when SIGTERM comes', () => {
  it('does not start its new thread on the stopping process', async () => {
    const { createScheduledTurns } = await import('./scheduled-turns.js');
    const { createManualScheduleClock } = await import('../../test/helpers/manual-schedule-clock.js');
    const store = createMemoryStore();
    const handled: string[] = [];
    const worker = createThreadWorker({ store, logger: silent, handle: async (work) => void handled.push(work.kind) });
    const postAsked = deferred();
    const postMay = deferred();
    const clock = createManualScheduleClock(Date.parse('2026-11-25T12:07:00.000Z'));
    const schedules = createScheduledTurns({
      schedules: [{ name: 'heartbeat', cron: '*/15 * * * *', channel: 'C0OPS', prompt: 'Check the pods.', autoApprove: [] }],
      store,
      poster: {
        async postChannelMessage() {
          postAsked.resolve();
          await postMay.promise;
          return '1800000000.000001';
        },
      },
      notices: { postNotice: async () => {} },
      followTtlMs: 60_000,
      worker,
      teamId: async () => 'T0TEAM',
      clock,
      logger: silent,
    });
    schedules.start();
    const firing = clock.advanceTo(Date.parse('2026-11-25T12:15:00.000Z'));
    await postAsked.promise;
    // SIGTERM, as bot.stop() does it: the worker first, then the schedules (which wait for the firing).
    worker.stopTaking();
    const stopped = schedules.stop();
    postMay.resolve();
    await Promise.all([firing, stopped]);
    await worker.idle();
    expect(handled, 'the stopping process started a scheduled turn (a new thread) after SIGTERM').toEqual([]);
    expect(decodeWorkItem((await store.takeLeftover('T0TEAM:C0OPS:1800000000.000001')) ?? '')).toMatchObject({ kind: 'message' });
  });
});
