import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { createMemoryAuditLog } from '../audit/memory-audit-log.js';
import type { ThreadMessenger } from '../conversation/thread-messenger.js';
import { createThreadWorker } from '../conversation/thread-worker.js';
import { encodeWorkItem } from '../conversation/work-item.js';
import { createMemoryStore } from '../store/memory-store.js';
import { createCallDecider } from './decide-call.js';
import { click, DECIDER_CONFIG, stepFor, storeStep } from './decide-call.test-support.js';
import { evaluatePolicy } from './policy/evaluate-policy.js';

const logger = pino({ level: 'silent' });

/**
 * A click acked just before SIGTERM, its decision completing the step once the process is stopping
 * (`stopTaking`): the write that queues the resume takes the thread's free lock with the thread's
 * oldest work (an item left in flight, else the queue's head). The stopping process runs that item
 * only if it is the click's own resume (`TakenClaim.request`); older work is left to a live replica.
 */
function setup() {
  const store = createMemoryStore();
  const handled: string[] = [];
  const worker = createThreadWorker({ store, logger, handle: async (item) => void handled.push(item.kind) });
  const decider = createCallDecider({
    store,
    messenger: { updateStepCard: async () => {} } as unknown as ThreadMessenger,
    worker,
    logger,
    audit: createMemoryAuditLog({ logger }),
    resolveGroups: async () => new Map(),
    evaluateInput: async ({ call, input }) => evaluatePolicy({ policy: DECIDER_CONFIG.policy, toolName: call.toolName, channel: 'C0OPS', input }),
  });
  return { store, worker, decider, handled };
}

describe('a click that completes a step on a process told to stop', () => {
  it('runs its own resume when its write took the thread with it', async () => {
    const { store, worker, decider, handled } = setup();
    const step = await storeStep(store, stepFor('scale'));
    worker.stopTaking();
    const outcome = await decider.record(click(step, 'U0ALICE', { kind: 'approve', version: 0 }));
    expect(outcome).toMatchObject({ recorded: true, completedStep: true });
    if (outcome.recorded) await decider.publish(outcome);
    await worker.idle();
    expect(handled).toEqual(['resume']);
  });

  it("hands back the thread's older work its write took first, and leaves its own resume queued behind it", async () => {
    const { store, worker, decider, handled } = setup();
    const step = await storeStep(store, stepFor('scale'));
    // A message left in flight by a holder whose lock was released (handed back by a stopping replica).
    const older = (await store.enqueueWork(step.threadKey, encodeWorkItem({ kind: 'message', userId: 'U0CAROL', text: 'hi', ts: '1700000000.000900', teamId: step.teamId, channel: step.channel, threadTs: step.threadTs, readEarlierMessages: false }), 60_000))!;
    expect(await store.releaseLockIfIdle({ threadKey: step.threadKey, token: older.token }, 60_000, { handBack: true })).toBe('released');
    worker.stopTaking();
    const outcome = await decider.record(click(step, 'U0ALICE', { kind: 'approve', version: 0 }));
    expect(outcome).toMatchObject({ recorded: true, completedStep: true });
    if (outcome.recorded) await decider.publish(outcome);
    await worker.idle();
    expect(handled, "the stopping process started work its click's write took first, not the click's own resume").toEqual([]);
    // A live worker takes the thread from the ready list: the message first (left in flight), then the resume.
    expect(await store.nextReadyThreads({ timeoutMs: 1_000, max: 5 })).toContain(step.threadKey);
    const live = createThreadWorker({ store, logger, handle: async (item) => void handled.push(`live:${item.kind}`) });
    expect(await live.pickUp(step.threadKey)).toBe(true);
    expect(handled).toEqual(['live:message', 'live:resume']);
  });
});
