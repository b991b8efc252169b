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
import type { PolicyConfig } from '../../src/config/policy-config-schema.js';
import { newStepId } from '../../src/store/redis-keys.js';
import { createRedisStore } from '../../src/store/redis-store.js';
import type { StateStore } from '../../src/store/state-store.js';
import { newThreadState } from '../../src/store/thread-state.js';

/**
 * README: every click is judged by the governing policy, the card's and the config in force's
 * together, and App Home lists a call only to whoever both let approve. A reminder (a reminding hop
 * of the ladder, or the rule's own reminder) mentioned the approvers STORED on the card instead: after
 * a deploy took someone off the rule it still pinged them, to a card that refuses their click, and it
 * never named a person the config in force singles out of a group or of "anyone in the channel".
 * Real Redis, as the sweep runs it.
 */
const logger = pino({ level: 'silent' });
const MINUTE = 60_000;
const worker = { submit: async () => {}, pickUp: async () => false, startPickUp: async () => false, room: () => 0, idle: async () => {}, queueing: { mode: 'hand-off' as const, lockTtlMs: 60_000 }, claimTaken: <T>(_threadKey: string, claim: T) => claim, drainClaimed: async () => {} };

const policyOf = (approvers: string, extra = '') =>
  parseConfigFile(
    `
policy:
  rules:
    - name: staging restarts
      tools: [restart_service]
      approvers: ${approvers}
      expiry: 1h
${extra}`,
    'countersign.yml',
  ).policy;

const LADDER = '      escalation: [{ after: 5m, remind: true }]';
const OWN_REMINDER = '      reminder: 50m';

const stores: StateStore[] = [];
afterEach(async () => {
  await Promise.all(stores.splice(0).map((store) => store.close()));
});

/** A step opened under `posted`, then swept by a process whose config in force is `deployed`. */
async function sweptAfterDeploy({ posted, deployed, at, groups = {} }: { posted: PolicyConfig; deployed: PolicyConfig; at: number; groups?: Record<string, string[]> }) {
  const store = createRedisStore({ url: inject('redisUrl'), keyPrefix: `reminder-governing:${randomUUID()}:` });
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

  const mentions: string[] = [];
  const messenger = new Proxy({} as ThreadMessenger, {
    get: (_target, name) => (name === 'postMention' ? async ({ text }: { text: string }) => void mentions.push(text) : async () => undefined),
  });
  await createExpirySweeper({
    store,
    messenger,
    worker,
    logger,
    now: () => at,
    currentEvaluation: async ({ call, input }) => evaluatePolicy({ policy: deployed, toolName: call.toolName, channel: CHANNEL, input }),
    resolveGroups: async (groupIds: readonly string[]) => new Map(groupIds.map((groupId) => [groupId, new Set(groups[groupId] ?? [])])),
  }).sweepOnce();
  return mentions;
}

describe('a reminder after a deploy that changed the approvers', () => {
  it("a ladder's reminding hop does not ping an approver the deploy took off the rule", async () => {
    const mentions = await sweptAfterDeploy({
      posted: policyOf('[U0OLD, U0KEEP]', LADDER),
      deployed: policyOf('[U0KEEP, U0NEW]', LADDER),
      at: CREATED_AT + 6 * MINUTE,
    });
    const reminders = mentions.filter((text) => text.includes('Reminder'));
    expect(reminders).toHaveLength(1);
    // Only U0KEEP may approve: the card's policy and the one in force both name them.
    expect(reminders[0]).toContain('<@U0KEEP>');
    expect(reminders[0]).not.toContain('U0OLD');
    expect(reminders[0]).not.toContain('U0NEW');
  });

  it("the rule's own reminder pings the one person of the card's group the config in force names, not the whole group", async () => {
    const mentions = await sweptAfterDeploy({
      posted: policyOf('["group:S0ONCALL"]', OWN_REMINDER),
      deployed: policyOf('[U0NEW]', OWN_REMINDER),
      at: CREATED_AT + 11 * MINUTE,
      groups: { S0ONCALL: ['U0NEW', 'U0BOB'] },
    });
    expect(mentions).toHaveLength(1);
    expect(mentions[0]).toContain('<@U0NEW>');
    expect(mentions[0]).not.toContain('S0ONCALL');
    expect(mentions[0]).not.toContain('U0BOB');
  });

  it('names the approver the config in force now asks for where the card let anyone in the channel approve', async () => {
    const mentions = await sweptAfterDeploy({
      posted: policyOf('[channel]', LADDER),
      deployed: policyOf('[U0NEW]', LADDER),
      at: CREATED_AT + 6 * MINUTE,
    });
    const reminders = mentions.filter((text) => text.includes('Reminder'));
    expect(reminders).toEqual([expect.stringContaining('<@U0NEW>')]);
  });

  it('keeps pinging the group when the deploy changed the rule but not its approvers', async () => {
    const mentions = await sweptAfterDeploy({
      posted: policyOf('["group:S0ONCALL"]', LADDER),
      deployed: policyOf('["group:S0ONCALL"]', `${LADDER}\n      grants: forbidden`),
      at: CREATED_AT + 6 * MINUTE,
    });
    expect(mentions.filter((text) => text.includes('Reminder'))).toEqual([expect.stringContaining('<!subteam^S0ONCALL>')]);
  });
});
