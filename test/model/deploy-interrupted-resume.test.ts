import { randomUUID } from 'node:crypto';
import { describe, expect, inject, it } from 'vitest';
import { createMemoryStore } from '../../src/store/memory-store.js';
import { createRedisStore } from '../../src/store/redis-store.js';
import type { StateStore } from '../../src/store/state-store.js';
import { CHANNEL, TEAM, THREADS } from './countersignature-world.js';
import type { DConfig, DRule } from './deploy-model.js';
import { createDeployWorld } from './deploy-world.js';

/**
 * The shrunk counterexamples of `deploy-crash-recovery.model.test.ts`, as named regressions. A
 * process claims the resume of an approved step (the claim re-checks the approval under the
 * config in force: `recheckApprovals`, `closeStaleApprovals`) and dies before the call starts,
 * as when a deploy kills it. The deploy takes away what the approval stood on: the approval hook
 * that gave it, the rule's consent to automatic approval, or the quorum it met. The process that
 * takes the resume item over runs on the new config, finds the thread ending with the step's
 * decisions and runs the approved call (`recoverInterruptedResume` → `runAndPublish(approvedRunsFor(step))`)
 * without judging the approval again; only the tool's definition is checked there (by the tool set).
 * Try again re-judges the very same approval under the config in force (`judgeCarriedApprovals`
 * with `hookInForce`) and would not run it; nor would the claim, had the deploy come a moment earlier.
 */
const rule = (name: 'prod' | 'other', overrides: Partial<DRule> = {}): DRule => ({
  name,
  approvers: { kind: 'channel' },
  required: 1,
  allowSelfApproval: false,
  expiryMinutes: 20,
  autoApprove: 'allowed',
  ...overrides,
});
const before: DConfig = { prod: rule('prod'), other: rule('other'), tool: 'v1', hook: 'h1' };
const input = { service: 'worker', namespace: 'staging' } as const;

const stores: Array<[string, () => StateStore]> = [
  ['memory', () => createMemoryStore()],
  ['redis', () => createRedisStore({ url: inject('redisUrl'), keyPrefix: `dinterrupted:${randomUUID()}:` })],
];

describe.each(stores)('a resume that died after its claim, finished after a deploy (%s store)', (_name, createStore) => {
  async function withWorld(work: (world: ReturnType<typeof createDeployWorld>) => Promise<void>) {
    const store = createStore();
    try {
      await work(createDeployWorld({ store, startAt: Date.now(), config: before }));
    } finally {
      await store.close();
    }
  }

  it('does not run a call the approval hook approved once a deploy removed that hook', async () => {
    await withWorld(async (world) => {
      const stepId = await world.propose({ requesterId: 'U0ALICE', threadTs: THREADS[0], input, hook: 'approve' });
      expect((await world.store.getStep(stepId))?.phase).toBe('complete');
      expect(await world.resumeAndCrash(stepId)).toEqual([]);
      expect((await world.store.getStep(stepId))?.phase).toBe('resumed');
      world.deploy({ ...before, hook: undefined });
      // The same step resumed by the new process before the crash would be closed at the claim:
      // "the approval by the policy hook h1 no longer holds (no approval hook is configured now)".
      expect(await world.resume(stepId), 'ran on the approval of a hook that is no longer configured').toEqual([]);
    });
  });

  it('does not run a call the approval hook approved once a deploy set autoApprove: forbidden on its rule', async () => {
    await withWorld(async (world) => {
      const stepId = await world.propose({ requesterId: 'U0ALICE', threadTs: THREADS[0], input, hook: 'approve' });
      expect(await world.resumeAndCrash(stepId)).toEqual([]);
      world.deploy({ ...before, other: rule('other', { autoApprove: 'forbidden' }) });
      expect(await world.resume(stepId), 'ran a hook-approved call under a rule that now forbids automatic approval').toEqual([]);
    });
  });

  it('does not run a call one person approved once a deploy raised its rule to two approvers', async () => {
    await withWorld(async (world) => {
      const stepId = await world.propose({ requesterId: 'U0ALICE', threadTs: THREADS[0], input, hook: 'abstain' });
      const step = (await world.store.getStep(stepId))!;
      const approved = await world.process.decider.record({
        stepId,
        approvalId: step.calls[0]!.approvalId,
        userId: 'U0BOB',
        origin: { teamId: TEAM, channel: CHANNEL, membership: 'member' },
        action: { kind: 'approve', version: 0 },
      });
      expect(approved.recorded && approved.completedStep).toBe(true);
      expect(await world.resumeAndCrash(stepId)).toEqual([]);
      world.deploy({ ...before, other: rule('other', { required: 2 }) });
      expect(await world.resume(stepId), 'ran with 1 of the 2 approvals the rule in force requires').toEqual([]);
    });
  });
});
