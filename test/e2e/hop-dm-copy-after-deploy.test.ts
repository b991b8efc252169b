import { randomUUID } from 'node:crypto';
import { pino } from 'pino';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { parseConfigFile } from '../../src/config/config-file.js';
import { buildPendingStep } from '../../src/conversation/build-pending-step.js';
import type { CardCopyTarget, ThreadMessenger } from '../../src/conversation/thread-messenger.js';
import { createExpirySweeper } from '../../src/approvals/expiry-sweeper.js';
import { applyCallAction } from '../../src/approvals/transitions/call-action.js';
import type { PendingStep } from '../../src/approvals/pending-step.js';
import { CHANNEL, CREATED_AT, TEAM } from '../../src/approvals/pending-step.test-support.js';
import { evaluatePolicy } from '../../src/approvals/policy/evaluate-policy.js';
import { newStepId } from '../../src/store/redis-keys.js';
import { createRedisStore } from '../../src/store/redis-store.js';
import type { StateStore } from '../../src/store/state-store.js';
import { newThreadState } from '../../src/store/thread-state.js';

/**
 * README: "a hop announces only fallback approvers the config in force lets decide", and a request's
 * input is shown only to people who may see its channel or who may decide it. A hop after a deploy
 * that took the fallback approver U0LEAD off the ladder does not announce U0LEAD (and a click by
 * U0LEAD is refused), but the sweep still posts U0LEAD a DM copy of the card: the request's whole
 * input, with live buttons, sent to someone the config in force does not name at all.
 */
const logger = pino({ level: 'silent' });
const MINUTE = 60_000;
const worker = { submit: async () => {}, pickUp: async () => false, startPickUp: async () => false, room: () => 0, idle: async () => {}, queueing: { mode: 'hand-off' as const, lockTtlMs: 60_000 }, claimTaken: <T>(_threadKey: string, claim: T) => claim, drainClaimed: async () => {} };

const policyWithFallback = (fallback: string) =>
  parseConfigFile(
    `
policy:
  rules:
    - name: prod restarts
      tools: [restart_service]
      approvers: [U0OPS1]
      expiry: 1h
      notify: { dmApprovers: true }
      escalation: [{ after: 5m, addApprovers: [${fallback}] }]
`,
    'countersign.yml',
  ).policy;

const stores: StateStore[] = [];
afterEach(async () => {
  await Promise.all(stores.splice(0).map((store) => store.close()));
});

describe('a hop after a deploy that took its fallback approver off the ladder', () => {
  it('posts no DM copy of the request to the fallback approver the config in force no longer names', async () => {
    const posted = policyWithFallback('U0LEAD');
    const deployed = policyWithFallback('U0BOSS');
    const store = createRedisStore({ url: inject('redisUrl'), keyPrefix: `review-hop-dm:${randomUUID()}:` });
    stores.push(store);
    const thread = newThreadState({ teamId: TEAM, channel: CHANNEL, threadTs: `1700000000.${randomUUID().slice(0, 6)}` }, CREATED_AT);
    const step: PendingStep = await buildPendingStep({
      thread,
      requesterId: 'U0ALICE',
      requests: [{ kind: 'approval', approvalId: 'a1', toolCallId: 'call_0', toolName: 'restart_service', input: { service: 'api', secretNote: 'private channel detail' } }],
      policy: posted,
      definitionOf: () => undefined,
      stepId: newStepId(thread.threadKey),
      now: CREATED_AT,
    });
    const token = (await store.tryLock(step.threadKey, 60_000))!;
    await store.createStep({ step, thread: { ...thread, pendingStepId: step.stepId }, ttlMs: 3_600_000, audit: [], fence: { threadKey: step.threadKey, token } });

    const mentions: string[] = [];
    const copiesTo: CardCopyTarget[] = [];
    const messenger = new Proxy({} as ThreadMessenger, {
      get: (_target, name) => {
        if (name === 'postMention') return async ({ text }: { text: string }) => void mentions.push(text);
        if (name === 'postStepCopy')
          return async ({ target }: { target: CardCopyTarget }) => {
            copiesTo.push(target);
            const channel = target.kind === 'dm' ? `D${target.userId}` : target.channel;
            return { kind: target.kind, channel, ts: `1700000100.00000${copiesTo.length}`, ...(target.kind === 'dm' ? { userId: target.userId } : {}) };
          };
        return async () => undefined;
      },
    });
    const currentEvaluation = async ({ call, input }: { call: { toolName: string }; input: unknown }) => evaluatePolicy({ policy: deployed, toolName: call.toolName, channel: CHANNEL, input });
    await createExpirySweeper({ store, messenger, worker, logger, now: () => CREATED_AT + 6 * MINUTE, currentEvaluation, resolveGroups: async () => new Map() }).sweepOnce();

    const escalated = (await store.getStep(step.stepId))!;
    expect(escalated.escalation?.done).toBe(1);
    // The hop was not announced to U0LEAD, and a click by U0LEAD would be refused under the config in force.
    expect(mentions.join('\n')).not.toContain('U0LEAD');
    const call = escalated.calls[0]!;
    const judged = applyCallAction(
      escalated,
      { stepId: step.stepId, approvalId: 'a1', userId: 'U0LEAD', origin: { teamId: TEAM, channel: 'DU0LEAD', membership: 'member' }, action: { kind: 'approve', version: 0 } },
      { now: CREATED_AT + 7 * MINUTE, groupMembers: new Map(), currentPolicy: await currentEvaluation({ call, input: call.input }), newGrantId: () => 'g1' },
    );
    expect(judged.ok).toBe(false);
    // Yet the request (its input, with buttons) went to U0LEAD's DMs.
    expect(copiesTo).not.toContainEqual({ kind: 'dm', userId: 'U0LEAD' });
  });

  it('still DMs the fallback approver when the config in force keeps them on the ladder', async () => {
    const posted = policyWithFallback('U0LEAD');
    const store = createRedisStore({ url: inject('redisUrl'), keyPrefix: `review-hop-dm:${randomUUID()}:` });
    stores.push(store);
    const thread = newThreadState({ teamId: TEAM, channel: CHANNEL, threadTs: `1700000000.${randomUUID().slice(0, 6)}` }, CREATED_AT);
    const step: PendingStep = await buildPendingStep({
      thread,
      requesterId: 'U0ALICE',
      requests: [{ kind: 'approval', approvalId: 'a1', toolCallId: 'call_0', toolName: 'restart_service', input: { service: 'api' } }],
      policy: posted,
      definitionOf: () => undefined,
      stepId: newStepId(thread.threadKey),
      now: CREATED_AT,
    });
    const token = (await store.tryLock(step.threadKey, 60_000))!;
    await store.createStep({ step, thread: { ...thread, pendingStepId: step.stepId }, ttlMs: 3_600_000, audit: [], fence: { threadKey: step.threadKey, token } });
    await store.recordCardCopy(step.stepId, { kind: 'dm', channel: 'DU0OPS1', ts: '1700000100.000001', userId: 'U0OPS1' });
    const copiesTo: CardCopyTarget[] = [];
    const messenger = new Proxy({} as ThreadMessenger, {
      get: (_target, name) => {
        if (name === 'postStepCopy')
          return async ({ target }: { target: CardCopyTarget }) => {
            copiesTo.push(target);
            return { kind: 'dm', channel: 'DU0LEAD', ts: '1700000100.000002', userId: 'U0LEAD' };
          };
        return async () => undefined;
      },
    });
    const currentEvaluation = async ({ call, input }: { call: { toolName: string }; input: unknown }) => evaluatePolicy({ policy: posted, toolName: call.toolName, channel: CHANNEL, input });
    await createExpirySweeper({ store, messenger, worker, logger, now: () => CREATED_AT + 6 * MINUTE, currentEvaluation, resolveGroups: async () => new Map() }).sweepOnce();
    expect(copiesTo).toEqual([{ kind: 'dm', userId: 'U0LEAD' }]);
  });
});
