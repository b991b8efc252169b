import { randomUUID } from 'node:crypto';
import { describe, expect, inject, it, vi } from 'vitest';
import { startReplyLosingProxy } from '../../test/helpers/reply-losing-proxy.js';
import { makeStep } from '../approvals/pending-step.test-support.js';
import { applyCallAction } from '../approvals/transitions/call-action.js';
import { commitTransition } from '../approvals/transitions/commit-transition.js';
import { newStepId } from './redis-keys.js';
import { createRedisStore } from './redis-store.js';
import { newThreadState } from './thread-state.js';
import { WriteNotSentError, writeDidNotRun } from './write-not-run.js';

/**
 * A revoke reads the grant (HGET) before its write. That read's connection is cut and Redis stays
 * unreachable: the revoke's script is never sent, so the grant stands. The store must say so
 * (`WriteNotSentError`), or the person is told "cannot tell whether it went through".
 */
describe('a grant revoke whose read of the grant fails before the write', () => {
  it('rejects with WriteNotSentError, and the grant stands', async () => {
    const keyPrefix = `revoke-read-failed:${randomUUID()}:`;
    const channel = 'CREVOKE';
    const direct = createRedisStore({ url: inject('redisUrl'), keyPrefix });
    const template = makeStep(['apv-1'], { channel });
    const threadKey = `${template.teamId}:${channel}:${template.threadTs}`;
    const step = { ...template, threadKey, stepId: newStepId(threadKey) };
    const fence = { threadKey, token: (await direct.tryLock(threadKey, 60_000))! };
    await direct.createStep({ step, thread: { ...newThreadState(step, 1), pendingStepId: step.stepId }, ttlMs: 60_000, audit: [], fence });
    await commitTransition(direct, step.stepId, (current) => {
      const action = { kind: 'approve', version: 0, grant: { scope: 'channel', hours: 1, identicalArgumentsOnly: false } } as const;
      const result = applyCallAction(current, { stepId: step.stepId, approvalId: 'apv-1', userId: 'UBOB', origin: { teamId: step.teamId, channel, membership: 'member' }, action }, { now: Date.now(), groupMembers: new Map(), newGrantId: randomUUID });
      return result.ok ? result.transition : undefined;
    });
    const [grant] = await direct.listGrants({ teamId: step.teamId, channel });
    expect(grant).toBeDefined();
    // The grant id is first named by the revoke's HGET: that reply is lost, then Redis refuses connections.
    const proxy = await startReplyLosingProxy(inject('redisUrl'), grant!.grantId, { refuseForMs: 1_500 });
    const store = createRedisStore({ url: proxy.url, keyPrefix });
    try {
      const failure = await store
        .revokeGrant({ teamId: step.teamId, channel, grantId: grant!.grantId, audit: (stored) => ({ type: 'grant-revoked', grantId: stored.grantId, toolName: stored.toolName, scope: stored.scope, channel, userId: 'UCAROL', expiresAt: stored.expiresAt, identicalArgumentsOnly: false }) })
        .then(() => undefined, (error: unknown) => error);
      expect(proxy.cut(), 'the grant read was cut').toBe(true);
      expect(failure).toBeInstanceOf(WriteNotSentError);
      expect(writeDidNotRun(failure)).toBe(true);
      expect(await direct.listGrants({ teamId: step.teamId, channel })).toEqual([grant]);
    } finally {
      await vi.waitFor(() => expect(proxy.back()).toBe(true), { timeout: 10_000 });
      await store.close();
      await direct.close();
      await proxy.close();
    }
  }, 30_000);
});
