import { randomUUID } from 'node:crypto';
import { describe, expect, inject, it } from 'vitest';
import { makeStep, TEAM, CHANNEL } from '../approvals/pending-step.test-support.js';
import { applyCallAction } from '../approvals/transitions/call-action.js';
import type { AuditLogger } from '../audit/audit-log.js';
import { newStepId } from './redis-keys.js';
import { createRedisStore } from './redis-store.js';
import { newThreadState } from './thread-state.js';

/**
 * decide-call sends a decision's write again under the same attempt key when the first failed
 * outright (it may have landed before its reply was lost). The grant is stamped again by the store's
 * clock for the resend; the script finds the attempt and writes nothing, but the store logs the
 * resend's records: the structured audit log's grant-created says another end than the stored grant.
 */
describe('an "Approve & allow" write sent again under its attempt key', () => {
  it('logs the grant-created end the stored grant has', async () => {
    const keyPrefix = `grant-resend:${randomUUID()}:`;
    let storeNow = Date.now();
    const logged: Array<{ type: string; expiresAt?: number }> = [];
    const auditLogger = { info: (fields: { audit: { type: string; expiresAt?: number } }) => void logged.push(fields.audit) } as unknown as AuditLogger;
    // The process whose first send landed (its reply was lost, so it logged nothing)…
    const first = createRedisStore({ url: inject('redisUrl'), keyPrefix, serverClock: () => storeNow });
    // …and the same process sending it again (its records are logged as stored).
    const again = createRedisStore({ url: inject('redisUrl'), keyPrefix, serverClock: () => storeNow, auditLogger });
    try {
      const threadTs = `${Math.floor(storeNow / 1000)}.000100`;
      const threadKey = `${TEAM}:${CHANNEL}:${threadTs}`;
      const token = (await first.tryLock(threadKey, 60_000))!;
      const step = { ...makeStep(['apv-1'], { threadTs }), threadKey, stepId: newStepId(threadKey) };
      await first.createStep({ step, thread: { ...newThreadState(step, 1), threadKey, pendingStepId: step.stepId }, ttlMs: 60_000, audit: [{ type: 'expired', stepId: step.stepId, approvalId: 'x', toolName: 'marker' }], fence: { threadKey, token } });
      const read = (await first.getStep(step.stepId))!;
      const result = applyCallAction(
        read,
        { stepId: step.stepId, approvalId: 'apv-1', userId: 'UCAROL', origin: { teamId: TEAM, channel: CHANNEL, membership: 'member' }, action: { kind: 'approve', version: 0, grant: { scope: 'channel', hours: 1, identicalArgumentsOnly: false } } },
        { now: storeNow, groupMembers: new Map(), newGrantId: () => 'g-resent' },
      );
      if (!result.ok) throw new Error(result.refusal.message);
      const attempt = randomUUID();
      expect((await first.commitStep(result.transition, { attempt })).result).toBe('committed');
      // The resend, a few seconds later by Redis's clock (decide-call keeps sending while Redis is unreachable).
      storeNow += 20_000;
      expect((await again.commitStep(result.transition, { attempt })).result).toBe('committed');

      const [stored] = await again.listGrants({ teamId: TEAM, channel: CHANNEL });
      const createdLogged = logged.filter((event) => event.type === 'grant-created').map((event) => event.expiresAt);
      expect(createdLogged).toEqual([stored!.expiresAt]);
    } finally {
      await first.close();
      await again.close();
    }
  });
});
