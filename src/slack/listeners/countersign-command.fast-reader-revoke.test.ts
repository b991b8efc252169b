import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { makeStep, TEAM, CHANNEL } from '../../approvals/pending-step.test-support.js';
import { applyCallAction } from '../../approvals/transitions/call-action.js';
import { commitTransition } from '../../approvals/transitions/commit-transition.js';
import { createMemoryAuditLog } from '../../audit/memory-audit-log.js';
import { createMemoryStore } from '../../store/memory-store.js';
import { newStepId } from '../../store/redis-keys.js';
import { newThreadState } from '../../store/thread-state.js';
import { countersignHarness } from './countersign-command.test-support.js';

/** The clock of the replica that takes the clicks (the command reads none: grants are listed and revoked by the store's). */
const READER_NOW = 1_764_190_000_000;
const TTL = 60_000;

describe('/countersign grants Revoke on a replica whose clock runs fast', () => {
  it('revokes a grant that is still live by the store clock (other replicas still run calls under it)', async () => {
    // The store's clock (Redis TIME); the replica that takes the Revoke click (whose clock stands at
    // READER_NOW when it does) runs ten minutes ahead of it.
    let storeNow = READER_NOW - 65 * 60_000;
    const audit = createMemoryAuditLog({ logger: pino({ level: 'silent' }) });
    const store = createMemoryStore({ audit, now: () => storeNow });
    const threadKey = `${TEAM}:${CHANNEL}:1700000000.000100`;
    const token = (await store.tryLock(threadKey, TTL))!;
    const step = { ...makeStep(['apv-1']), stepId: newStepId(threadKey) };
    await store.createStep({
      step,
      thread: { ...newThreadState(step, 1), threadKey, pendingStepId: step.stepId },
      ttlMs: TTL,
      audit: [{ type: 'expired', stepId: step.stepId, approvalId: 'x', toolName: 'marker' }],
      fence: { threadKey, token },
    });
    // Carol gives a one-hour channel grant.
    await commitTransition(store, step.stepId, (current) => {
      const result = applyCallAction(
        current,
        { stepId: current.stepId, approvalId: 'apv-1', userId: 'UCAROL', origin: { teamId: TEAM, channel: CHANNEL, membership: 'member' }, action: { kind: 'approve', version: 0, grant: { scope: 'channel', hours: 1, identicalArgumentsOnly: false } } },
        { now: storeNow, groupMembers: new Map(), newGrantId: () => 'g-live' },
      );
      return result.ok ? result.transition : undefined;
    });

    // 55 minutes later by the store's clock: five minutes of the grant left, for every replica's call start.
    storeNow += 55 * 60_000;
    expect(READER_NOW - storeNow).toBe(10 * 60_000);
    expect((await store.listGrants({ teamId: TEAM, channel: CHANNEL })).map((grant) => grant.grantId)).toEqual(['g-live']);

    // Carol (the grantor) lists the channel's grants, then clicks Revoke; both land on the fast replica.
    const carol = countersignHarness(store);
    expect(await carol.type('grants')).toBe('returned');
    const listed = carol.postEphemeral.mock.calls[0]![0].text;
    carol.postEphemeral.mockClear();
    expect(await carol.clickRevoke('g-live')).toBe('returned');
    const told = carol.postEphemeral.mock.calls[0]![0].text;

    // Still live for every replica whose clock is right: calls keep running without a card.
    const stillThere = (await store.listGrants({ teamId: TEAM, channel: CHANNEL })).map((grant) => grant.grantId);
    const start = await store.markExecuting({
      fence: { threadKey, token },
      toolCallId: 'call_later',
      marker: { toolName: 'restart_service', input: {}, startedAt: storeNow } as never,
      ttlMs: TTL,
      audit: [],
      grant: { teamId: TEAM, channel: CHANNEL, grantId: 'g-live' },
    });
    expect({ listed, told, stillThere, start }).toEqual({ listed: '1 active grant(s) in this channel', told: expect.stringContaining('Revoked'), stillThere: [], start: 'grant-gone' });
  });
});
