import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import type { ThreadMessenger } from '../conversation/thread-messenger.js';
import { createMemoryStore } from '../store/memory-store.js';
import type { StateStore } from '../store/state-store.js';
import { newThreadState } from '../store/thread-state.js';
import { createExpirySweeper } from './expiry-sweeper.js';
import { evaluation, makeStep } from './pending-step.test-support.js';

const logger = pino({ level: 'silent' });
const worker = { submit: async () => {}, pickUp: async () => false, startPickUp: async () => false, room: () => 0, idle: async () => {}, queueing: { mode: 'hand-off' as const, lockTtlMs: 60_000 }, claimTaken: <T>(_threadKey: string, claim: T) => claim, drainClaimed: async () => {} };

/** A store whose first `readers` step reads all return only once every one of them has read: two processes that saw the same due hop. */
function withSimultaneousReads(store: StateStore, readers: number): StateStore {
  let arrived = 0;
  let release: () => void = () => {};
  const together = new Promise<void>((resolve) => {
    release = resolve;
  });
  return {
    ...store,
    async getStep(stepId) {
      const step = await store.getStep(stepId);
      arrived += 1;
      if (arrived <= readers) {
        if (arrived === readers) release();
        await together;
      }
      return step;
    },
  };
}

describe('escalation sweep', () => {
  it('makes and announces a hop once when two processes sweep it at the same moment', async () => {
    const store = createMemoryStore();
    const ladder = [{ afterMs: 100, remind: false, addApprovers: [{ kind: 'group' as const, groupId: 'S0LEADS' }] }];
    const step = makeStep([{ approvalId: 'apv-1', policy: evaluation({ approvers: [{ kind: 'user', userId: 'U0OPS' }], escalation: ladder }) }]);
    step.escalation = { ladder, rule: { index: 0 }, done: 0, nextAt: step.createdAt + 100 };
    step.expiresAt = step.createdAt + 60_000;
    const token = (await store.tryLock(step.threadKey, 60_000))!;
    await store.createStep({ step, thread: { ...newThreadState(step, 1), pendingStepId: step.stepId }, ttlMs: 60_000, audit: [], fence: { threadKey: step.threadKey, token } });

    const notices: string[] = [];
    const messenger = {
      postMention: async ({ text }: { text: string }) => void notices.push(text),
      updateStepCard: async () => {},
      updateStepCopy: async () => {},
    } as unknown as ThreadMessenger;
    const shared = withSimultaneousReads(store, 2);
    const sweepers = [1, 2].map(() => createExpirySweeper({ store: shared, messenger, worker, logger, now: () => step.createdAt + 150 }));
    await Promise.all(sweepers.map((sweeper) => sweeper.sweepOnce()));

    expect(notices.filter((text) => text.includes('Escalated'))).toHaveLength(1);
    expect((await store.getStep(step.stepId))?.escalation?.done).toBe(1);
    expect(await store.dueSteps({ kind: 'escalation', now: step.createdAt + 10_000, limit: 10 })).toEqual([]);
  });

  it('tells the fallback approvers only of the calls under the rule whose ladder named them', async () => {
    const store = createMemoryStore();
    const ladder = [{ afterMs: 100, remind: false, addApprovers: [{ kind: 'group' as const, groupId: 'S0LEADS' }] }];
    const step = makeStep([
      { approvalId: 'apv-1', policy: evaluation({ rule: { index: 1 }, approvers: [{ kind: 'user', userId: 'U0OPS' }], escalation: ladder }) },
      { approvalId: 'apv-2', input: { service: 'db', namespace: 'prod' }, policy: evaluation({ rule: { index: 0 }, approvers: [{ kind: 'user', userId: 'U0SRELEAD' }] }) },
    ]);
    step.calls[1]!.toolName = 'scale_service';
    step.escalation = { ladder, rule: { index: 1 }, done: 0, nextAt: step.createdAt + 100 };
    step.expiresAt = step.createdAt + 60_000;
    const token = (await store.tryLock(step.threadKey, 60_000))!;
    await store.createStep({ step, thread: { ...newThreadState(step, 1), pendingStepId: step.stepId }, ttlMs: 60_000, audit: [], fence: { threadKey: step.threadKey, token } });

    const notices: string[] = [];
    const messenger = {
      postMention: async ({ text }: { text: string }) => void notices.push(text),
      updateStepCard: async () => {},
      updateStepCopy: async () => {},
    } as unknown as ThreadMessenger;
    await createExpirySweeper({ store, messenger, worker, logger, now: () => step.createdAt + 150 }).sweepOnce();

    const escalated = notices.filter((text) => text.includes('Escalated'));
    expect(escalated).toHaveLength(1);
    expect(escalated[0]).toContain('`restart_service`');
    expect(escalated[0]).not.toContain('scale_service');
    const stored = await store.getStep(step.stepId);
    expect(stored?.calls[1]?.versions?.at(-1)?.policy.approvers).toEqual([{ kind: 'user', userId: 'U0SRELEAD' }]);
  });

  it('names the call it reaches by its place on the card when another rule\'s call has the same tool', async () => {
    const store = createMemoryStore();
    const ladder = [{ afterMs: 100, remind: false, addApprovers: [{ kind: 'user' as const, userId: 'U0LEAD' }] }];
    const step = makeStep([
      { approvalId: 'apv-1', input: { service: 'db', namespace: 'prod' }, policy: evaluation({ rule: { index: 0 }, approvers: [{ kind: 'user', userId: 'U0OPS' }] }) },
      { approvalId: 'apv-2', policy: evaluation({ rule: { index: 1 }, approvers: [{ kind: 'user', userId: 'U0STG' }], escalation: ladder }) },
    ]);
    step.escalation = { ladder, rule: { index: 1 }, done: 0, nextAt: step.createdAt + 100 };
    step.expiresAt = step.createdAt + 60_000;
    const token = (await store.tryLock(step.threadKey, 60_000))!;
    await store.createStep({ step, thread: { ...newThreadState(step, 1), pendingStepId: step.stepId }, ttlMs: 60_000, audit: [], fence: { threadKey: step.threadKey, token } });

    const notices: string[] = [];
    const messenger = {
      postMention: async ({ text }: { text: string }) => void notices.push(text),
      updateStepCard: async () => {},
      updateStepCopy: async () => {},
    } as unknown as ThreadMessenger;
    await createExpirySweeper({ store, messenger, worker, logger, now: () => step.createdAt + 150 }).sweepOnce();

    const escalated = notices.filter((text) => text.includes('Escalated'));
    expect(escalated).toHaveLength(1);
    expect(escalated[0]).toContain('<@U0LEAD> can now approve `restart_service` (call 2 of 2 on the card).');
  });

  describe('after a deploy that changed the ladder\'s rule', () => {
    const ladder = [{ afterMs: 100, remind: false, addApprovers: [{ kind: 'user' as const, userId: 'U0LEAD' }] }];

    async function sweptNotices(inForce: ReturnType<typeof evaluation>): Promise<string[]> {
      const store = createMemoryStore();
      const step = makeStep([{ approvalId: 'apv-1', policy: evaluation({ rule: { index: 0, fingerprint: 'before' }, approvers: [{ kind: 'user', userId: 'U0OPS' }], escalation: ladder }) }]);
      step.escalation = { ladder, rule: { index: 0, fingerprint: 'before' }, done: 0, nextAt: step.createdAt + 100 };
      step.expiresAt = step.createdAt + 60_000;
      const token = (await store.tryLock(step.threadKey, 60_000))!;
      await store.createStep({ step, thread: { ...newThreadState(step, 1), pendingStepId: step.stepId }, ttlMs: 60_000, audit: [], fence: { threadKey: step.threadKey, token } });
      const notices: string[] = [];
      const messenger = {
        postMention: async ({ text }: { text: string }) => void notices.push(text),
        updateStepCard: async () => {},
        updateStepCopy: async () => {},
      } as unknown as ThreadMessenger;
      await createExpirySweeper({ store, messenger, worker, logger, now: () => step.createdAt + 150, currentEvaluation: async () => inForce }).sweepOnce();
      return notices;
    }

    it('announces the fallback approver when the deploy left the ladder and the approvers as they were (only a reminder added)', async () => {
      const notices = await sweptNotices(evaluation({ rule: { index: 0, fingerprint: 'after' }, approvers: [{ kind: 'user', userId: 'U0OPS' }], escalation: ladder, reminderMs: 600_000 }));
      expect(notices).toEqual([expect.stringContaining('<@U0LEAD> can now approve `restart_service`')]);
    });

    it('does not tell a fallback approver they can approve when the config in force would refuse them', async () => {
      const otherLadder = [{ afterMs: 100, remind: false, addApprovers: [{ kind: 'user' as const, userId: 'U0CAROL' }] }];
      const notices = await sweptNotices(evaluation({ rule: { index: 0, fingerprint: 'after' }, approvers: [{ kind: 'user', userId: 'U0OPS' }], escalation: otherLadder }));
      expect(notices.filter((text) => text.includes('U0LEAD'))).toEqual([]);
    });
  });
});
