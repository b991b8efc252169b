import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { NEWER_RELEASE_RETRY_MS } from '../approvals/expiry-sweeper.js';
import { makeStep } from '../approvals/pending-step.test-support.js';
import { applyCallAction } from '../approvals/transitions/call-action.js';
import { commitTransition } from '../approvals/transitions/commit-transition.js';
import { createMemoryStore } from '../store/memory-store.js';
import { newThreadState, THREAD_STATE_SCHEMA_VERSION, type ThreadState } from '../store/thread-state.js';
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

describe('the recovery sweep, for a decided step whose thread a newer release saved', () => {
  it('leaves it to that release, out of the way of its batch, and says so at warn once', async () => {
    let at = 1_000_000;
    const store = createMemoryStore({ now: () => at });
    const lines: Array<{ level: number; event?: string; steps?: number }> = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
    const resumed: string[] = [];
    const worker = createThreadWorker({ store, logger, handle: async (work) => void resumed.push(work.kind) });
    const template = makeStep(['apv-1'], { threadTs: '2.2' });
    const fence = { threadKey: template.threadKey, token: (await store.tryLock(template.threadKey, 1_000))! };
    const thread = { ...newThreadState(template, 1), threadKey: template.threadKey, pendingStepId: template.stepId };
    await store.createStep({ step: template, thread, ttlMs: 3_600_000, audit: [], fence });
    await commitTransition(store, template.stepId, (step) => {
      const result = applyCallAction(step, { stepId: step.stepId, approvalId: 'apv-1', userId: 'UBOB', origin: { teamId: step.teamId, channel: step.channel, membership: 'member' }, action: { kind: 'approve', version: 0 } }, { now: at, groupMembers: new Map(), newGrantId: () => 'g' });
      return result.ok ? result.transition : undefined;
    });
    await store.saveThread({ ...thread, schemaVersion: THREAD_STATE_SCHEMA_VERSION + 1 } as unknown as ThreadState, 3_600_000, fence);
    const reported = { newerRelease: false };
    const sweep = async () => {
      await recoverStalledWork({ store, worker, now: () => at, graceMs: GRACE_MS, logger, reported });
      await worker.idle();
    };
    const left = () => lines.filter((line) => line.event === 'resumes-left-to-newer-release').map(({ level, steps }) => ({ level, steps }));

    at += GRACE_MS;
    await sweep();
    await sweep();
    expect({ resumed, left: left(), stillDecided: await store.completedSteps({ before: at + NEWER_RELEASE_RETRY_MS, limit: 10 }) }).toEqual({
      resumed: [],
      left: [{ level: 40, steps: 1 }],
      stillDecided: [template.stepId],
    });
    // Looked at again once put off long enough: still left, said at info.
    at += NEWER_RELEASE_RETRY_MS;
    await sweep();
    expect({ resumed, left: left() }).toEqual({ resumed: [], left: [{ level: 40, steps: 1 }, { level: 30, steps: 1 }] });
  });
});
