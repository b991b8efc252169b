import { randomUUID } from 'node:crypto';
import { pino } from 'pino';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { parseConfigFile } from '../../src/config/config-file.js';
import { buildPendingStep } from '../../src/conversation/build-pending-step.js';
import type { ThreadMessenger } from '../../src/conversation/thread-messenger.js';
import { createExpirySweeper } from '../../src/approvals/expiry-sweeper.js';
import type { PendingStep } from '../../src/approvals/pending-step.js';
import { CHANNEL, CREATED_AT, TEAM } from '../../src/approvals/pending-step.test-support.js';
import { evaluatePolicy } from '../../src/approvals/policy/evaluate-policy.js';
import { newStepId } from '../../src/store/redis-keys.js';
import { createRedisStore } from '../../src/store/redis-store.js';
import type { StateStore } from '../../src/store/state-store.js';
import { newThreadState } from '../../src/store/thread-state.js';

/**
 * A rule that sends its card to #approvals with `thread: false` (the thread's card has no buttons:
 * the approvers decide in #approvals, and need not be in the thread's channel at all, e.g. a private
 * one). An escalation hop that adds approvers is announced "in the thread and under each channel
 * copy"; the rule's reminder (and a reminding hop) is posted in the thread only, where the approvers
 * it mentions are not, so a reminder reaches nobody who can decide.
 */
const logger = pino({ level: 'silent' });
const MINUTE = 60_000;
const APPROVALS = 'C0APPROVALS';
const worker = { submit: async () => {}, pickUp: async () => false, startPickUp: async () => false, room: () => 0, idle: async () => {}, queueing: { mode: 'hand-off' as const, lockTtlMs: 60_000 }, claimTaken: <T>(_threadKey: string, claim: T) => claim, drainClaimed: async () => {} };

const policy = (extra: string) =>
  parseConfigFile(
    `
policy:
  rules:
    - name: prod restarts
      tools: [restart_service]
      approvers: ["group:S0OPS"]
      expiry: 1h
      notify: { thread: false, channels: [${APPROVALS}] }
${extra}`,
    'countersign.yml',
  ).policy;

const stores: StateStore[] = [];
afterEach(async () => {
  await Promise.all(stores.splice(0).map((store) => store.close()));
});

async function remindersOf(extra: string, at: number) {
  const posted = policy(extra);
  const store = createRedisStore({ url: inject('redisUrl'), keyPrefix: `review-reminder:${randomUUID()}:` });
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
  await store.recordCardCopy(step.stepId, { kind: 'channel', channel: APPROVALS, ts: '1700000100.000001' });

  const mentions: { channel: string; threadTs: string; text: string }[] = [];
  const messenger = new Proxy({} as ThreadMessenger, {
    get: (_target, name) => (name === 'postMention' ? async (mention: { channel: string; threadTs: string; text: string }) => void mentions.push(mention) : async () => undefined),
  });
  await createExpirySweeper({
    store,
    messenger,
    worker,
    logger,
    now: () => at,
    currentEvaluation: async ({ call, input }) => evaluatePolicy({ policy: posted, toolName: call.toolName, channel: CHANNEL, input }),
    resolveGroups: async () => new Map(),
  }).sweepOnce();
  return mentions;
}

describe('a reminder for a card the rule sends to #approvals only', () => {
  it('an escalation hop that adds approvers is announced under the #approvals copy (as documented)', async () => {
    const mentions = await remindersOf('      escalation: [{ after: 5m, addApprovers: ["group:S0LEADS"] }]', CREATED_AT + 6 * MINUTE);
    expect(mentions.map((mention) => mention.channel)).toContain(APPROVALS);
  });

  it("the rule's reminder reaches the #approvals copy, where its approvers decide, not only the thread", async () => {
    const mentions = await remindersOf('      reminder: 50m', CREATED_AT + 11 * MINUTE);
    expect(mentions.length).toBeGreaterThan(0);
    expect(mentions.map((mention) => mention.channel)).toContain(APPROVALS);
  });

  it("a ladder's reminding hop reaches the #approvals copy too", async () => {
    const mentions = await remindersOf('      escalation: [{ after: 5m, remind: true }]', CREATED_AT + 6 * MINUTE);
    expect(mentions.length).toBeGreaterThan(0);
    expect(mentions.map((mention) => mention.channel)).toContain(APPROVALS);
  });
});

describe('a reminder for a card the rule sends to its approvers in DMs', () => {
  const dmPolicy = (approvers: string) =>
    parseConfigFile(
      `
policy:
  rules:
    - name: prod restarts
      tools: [restart_service]
      approvers: [${approvers}]
      expiry: 1h
      reminder: 50m
      notify: { thread: false, dmApprovers: true }
`,
      'countersign.yml',
    ).policy;

  async function dmReminders(inForce: string) {
    const posted = dmPolicy('U0OPS1, U0OPS2');
    const deployed = dmPolicy(inForce);
    const store = createRedisStore({ url: inject('redisUrl'), keyPrefix: `review-reminder:${randomUUID()}:` });
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
    await store.recordCardCopy(step.stepId, { kind: 'dm', channel: 'D0OPS1', ts: '1700000100.000001', userId: 'U0OPS1' });
    await store.recordCardCopy(step.stepId, { kind: 'dm', channel: 'D0OPS2', ts: '1700000100.000002', userId: 'U0OPS2' });
    const mentions: { channel: string; threadTs: string; text: string }[] = [];
    const messenger = new Proxy({} as ThreadMessenger, {
      get: (_target, name) => (name === 'postMention' ? async (mention: { channel: string; threadTs: string; text: string }) => void mentions.push(mention) : async () => undefined),
    });
    await createExpirySweeper({
      store,
      messenger,
      worker,
      logger,
      now: () => CREATED_AT + 11 * MINUTE,
      currentEvaluation: async ({ call, input }) => evaluatePolicy({ policy: deployed, toolName: call.toolName, channel: CHANNEL, input }),
      resolveGroups: async () => new Map(),
    }).sweepOnce();
    return mentions;
  }

  it('reminds each approver in their DM, under the copy, as well as in the thread', async () => {
    const mentions = await dmReminders('U0OPS1, U0OPS2');
    expect(mentions.map((mention) => [mention.channel, mention.threadTs])).toEqual([
      [CHANNEL, expect.any(String)],
      ['D0OPS1', '1700000100.000001'],
      ['D0OPS2', '1700000100.000002'],
    ]);
  });

  it('sends no reminder to the DM of someone a deploy took off the rule', async () => {
    const mentions = await dmReminders('U0OPS1');
    expect(mentions.map((mention) => mention.channel)).toEqual([CHANNEL, 'D0OPS1']);
    expect(mentions.map((mention) => mention.text).join('\n')).not.toContain('U0OPS2');
  });
});
