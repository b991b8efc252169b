import { randomUUID } from 'node:crypto';
import { pino } from 'pino';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { createMemoryAuditLog } from '../../src/audit/memory-audit-log.js';
import { parseConfigFile } from '../../src/config/config-file.js';
import { buildPendingStep } from '../../src/conversation/build-pending-step.js';
import type { ThreadMessenger } from '../../src/conversation/thread-messenger.js';
import { createCallDecider, type CallDecisionRequest } from '../../src/approvals/decide-call.js';
import { createExpirySweeper } from '../../src/approvals/expiry-sweeper.js';
import type { PendingStep } from '../../src/approvals/pending-step.js';
import { CHANNEL, CREATED_AT, TEAM } from '../../src/approvals/pending-step.test-support.js';
import { evaluatePolicy } from '../../src/approvals/policy/evaluate-policy.js';
import { buildApprovalCard } from '../../src/slack/blocks/approval-card.js';
import { newStepId } from '../../src/store/redis-keys.js';
import { createRedisStore } from '../../src/store/redis-store.js';
import type { StateStore } from '../../src/store/state-store.js';
import { newThreadState } from '../../src/store/thread-state.js';

/**
 * README: "A hop that comes due when no call under the ladder's rule waits stops the ladder" — the
 * hop's escalate transition keeps no `nextAt` and the sweep takes the step off the `escalations`
 * schedule. An edit that then puts a call back under the ladder's rule (the call edited to prod and
 * back, or another call of the card edited into it) left it stopped: nothing ever put it on the
 * schedule again, so the call waited under that rule with no reminder and no fallback approver,
 * while the card still shows the rule's ladder ("Stage 1 of 3"). Real Redis: the schedule is a
 * sorted set the edit's commit script must write.
 */
const logger = pino({ level: 'silent' });
const MINUTE = 60_000;
const config = parseConfigFile(
  `
policy:
  rules:
    - name: prod restarts
      tools: [restart_service]
      input: [{ field: namespace, equals: prod }]
      approvers: [U0SRELEAD]
      expiry: 1h
    - name: staging restarts
      tools: [restart_service]
      approvers: [U0STAGEOWNER]
      expiry: 1h
      escalation: [{ after: 5m, remind: true }, { after: 20m, addApprovers: [U0LEAD] }]
`,
  'countersign.yml',
);

const worker = { submit: async () => {}, pickUp: async () => false, startPickUp: async () => false, room: () => 0, idle: async () => {}, queueing: { mode: 'hand-off' as const, lockTtlMs: 60_000 }, claimTaken: <T>(_threadKey: string, claim: T) => claim, drainClaimed: async () => {} };

const stores: StateStore[] = [];
afterEach(async () => {
  await Promise.all(stores.splice(0).map((store) => store.close()));
});

function setup({ sweeperStore = (store: StateStore) => store }: { sweeperStore?: (store: StateStore) => StateStore } = {}) {
  let clock = CREATED_AT;
  // The test's clock stands in for Redis's, which judges deadlines at the write.
  const store = createRedisStore({ url: inject('redisUrl'), keyPrefix: `stopped-ladder-edit:${randomUUID()}:`, serverClock: () => clock });
  stores.push(store);
  const notices: string[] = [];
  // Every messenger call is a no-op but for the mentions, which are what a hop sends.
  const messenger = new Proxy({} as ThreadMessenger, {
    get: (_target, name) =>
      name === 'postMention'
        ? async ({ text }: { text: string }) => {
            notices.push(text);
            return { ts: `${notices.length}.0` };
          }
        : async () => undefined,
  });
  const decider = createCallDecider({
    store,
    messenger,
    worker,
    logger,
    audit: createMemoryAuditLog({ logger }),
    resolveGroups: async () => new Map(),
    evaluateInput: async ({ call, input }) => evaluatePolicy({ policy: config.policy, toolName: call.toolName, channel: CHANNEL, input }),
    now: () => clock,
  });
  const sweeper = createExpirySweeper({ store: sweeperStore(store), messenger, worker, logger, now: () => clock });
  return {
    store,
    notices,
    decider,
    /** Every replica sweeps every few seconds: a sweep at `at`. */
    sweepAt: async (at: number) => {
      clock = at;
      await sweeper.sweepOnce();
    },
    at: (at: number) => {
      clock = at;
    },
  };
}

async function openStep(store: StateStore, inputs: ReadonlyArray<{ service: string; namespace: string }>): Promise<PendingStep> {
  const thread = newThreadState({ teamId: TEAM, channel: CHANNEL, threadTs: `1700000000.${randomUUID().slice(0, 6)}` }, CREATED_AT);
  const step = await buildPendingStep({
    thread,
    requesterId: 'U0ALICE',
    requests: inputs.map((input, index) => ({ kind: 'approval' as const, approvalId: `a${index + 1}`, toolCallId: `call_${index}`, toolName: 'restart_service', input })),
    policy: config.policy,
    definitionOf: () => undefined,
    stepId: newStepId(thread.threadKey),
    now: CREATED_AT,
  });
  const token = (await store.tryLock(step.threadKey, 60_000))!;
  await store.createStep({ step, thread: { ...thread, pendingStepId: step.stepId }, ttlMs: 3_600_000, audit: [], fence: { threadKey: step.threadKey, token } });
  await store.releaseLockIfIdle({ threadKey: step.threadKey, token }, 60_000);
  return step;
}

const click = (step: PendingStep, approvalId: string, userId: string, action: CallDecisionRequest['action']): CallDecisionRequest => ({
  stepId: step.stepId,
  approvalId,
  userId,
  origin: { teamId: step.teamId, channel: step.channel, membership: 'member' },
  action,
});

const editTo = (fromVersion: number, input: unknown): CallDecisionRequest['action'] => ({ kind: 'edit', fromVersion, input, submittedInput: input });

const summaryOf = (step: PendingStep) => JSON.stringify(buildApprovalCard({ step }).blocks[1]);

describe('a ladder that stopped while no call waited under its rule', () => {
  it('goes on when an edit puts the call back under that rule: the approvers are reminded and the fallback approver is added', async () => {
    const { store, notices, decider, sweepAt, at } = setup();
    const step = await openStep(store, [{ service: 'api', namespace: 'staging' }]);
    expect(step.escalation?.nextAt).toBe(CREATED_AT + 5 * MINUTE);

    // 1m: the staging owner edits the call to prod; it now waits for the SRE lead, whose rule has no ladder.
    at(CREATED_AT + MINUTE);
    expect(await decider.record(click(step, 'a1', 'U0STAGEOWNER', editTo(0, { service: 'api', namespace: 'prod' })))).toMatchObject({ recorded: true, effect: { kind: 'new-version', counted: false } });
    // 6m: the 5m hop finds no call under the staging rule: the ladder stops, silently.
    await sweepAt(CREATED_AT + 6 * MINUTE);
    expect(notices).toEqual([]);
    expect((await store.getStep(step.stepId))?.escalation?.nextAt).toBeUndefined();

    // 8m: the SRE lead edits it back to staging: it waits for the staging owner again, under the ladder's rule.
    at(CREATED_AT + 8 * MINUTE);
    expect(await decider.record(click(step, 'a1', 'U0SRELEAD', editTo(1, { service: 'api', namespace: 'staging' })))).toMatchObject({ recorded: true, effect: { kind: 'new-version', counted: false } });
    const edited = (await store.getStep(step.stepId))!;
    // The ladder's times count from the request: the 5m hop, overdue, is due at the edit; the card says what comes next.
    expect(edited.escalation?.nextAt).toBe(CREATED_AT + 8 * MINUTE);
    expect(summaryOf(edited)).toContain('Stage 1 of 3 · next: reminder');
    expect(await store.dueSteps({ kind: 'escalation', now: CREATED_AT + 8 * MINUTE, limit: 10 })).toEqual([step.stepId]);

    await sweepAt(CREATED_AT + 8 * MINUTE + 5_000);
    const reminders = notices.filter((text) => text.includes('Reminder'));
    expect(reminders).toHaveLength(1);
    expect(reminders[0]).toContain('<@U0STAGEOWNER>');
    // The 20m hop keeps its time from the request.
    expect((await store.getStep(step.stepId))?.escalation).toMatchObject({ done: 1, nextAt: CREATED_AT + 20 * MINUTE });
    await sweepAt(CREATED_AT + 21 * MINUTE);
    expect(notices.filter((text) => text.includes('Escalated'))).toEqual([expect.stringContaining('<@U0LEAD> can now approve')]);
    at(CREATED_AT + 22 * MINUTE);
    expect(await decider.record(click(step, 'a1', 'U0LEAD', { kind: 'approve', version: 2 }))).toMatchObject({ recorded: true, completedStep: true });
  });

  it("goes on when an edit puts another of the card's calls under that rule after the ladder's own call was decided", async () => {
    const { store, notices, decider, sweepAt, at } = setup();
    const step = await openStep(store, [
      { service: 'api', namespace: 'staging' },
      { service: 'db', namespace: 'prod' },
    ]);
    // 2m: the staging call is approved; only the prod call waits, and the ladder is not its rule's.
    at(CREATED_AT + 2 * MINUTE);
    expect(await decider.record(click(step, 'a1', 'U0STAGEOWNER', { kind: 'approve', version: 0 }))).toMatchObject({ recorded: true, completedStep: false });
    await sweepAt(CREATED_AT + 6 * MINUTE);
    expect(notices).toEqual([]);
    expect(await store.dueSteps({ kind: 'escalation', now: CREATED_AT + 59 * MINUTE, limit: 10 })).toEqual([]);

    // 10m: the SRE lead edits the prod call to staging: it now waits for the staging owner, under the ladder's rule.
    at(CREATED_AT + 10 * MINUTE);
    expect(await decider.record(click(step, 'a2', 'U0SRELEAD', editTo(0, { service: 'db', namespace: 'staging' })))).toMatchObject({ recorded: true, effect: { kind: 'new-version', counted: false } });
    await sweepAt(CREATED_AT + 10 * MINUTE + 5_000);
    expect(notices.filter((text) => text.includes('Reminder'))).toEqual([expect.stringContaining('<@U0STAGEOWNER>')]);
    await sweepAt(CREATED_AT + 25 * MINUTE);
    expect(notices.filter((text) => text.includes('Escalated'))).toEqual([expect.stringContaining('<@U0LEAD> can now approve')]);
    expect((await store.getStep(step.stepId))?.escalation?.done).toBe(2);
  });

  it('stays on the schedule when the edit lands while the sweep that stopped it is taking it off', async () => {
    let duringRemoval: (() => Promise<void>) | undefined;
    const { store, notices, decider, sweepAt, at } = setup({
      // The sweep's store: the edit lands right before the stopped ladder comes off the schedule.
      sweeperStore: (inner) => ({
        ...inner,
        async scheduleEscalation(stepId, hopAt) {
          const before = duringRemoval;
          duringRemoval = undefined;
          if (hopAt === undefined && before) await before();
          return inner.scheduleEscalation(stepId, hopAt);
        },
      }),
    });
    const step = await openStep(store, [{ service: 'api', namespace: 'staging' }]);
    at(CREATED_AT + MINUTE);
    expect(await decider.record(click(step, 'a1', 'U0STAGEOWNER', editTo(0, { service: 'api', namespace: 'prod' })))).toMatchObject({ recorded: true });
    let edit: unknown;
    duringRemoval = async () => {
      edit = await decider.record(click(step, 'a1', 'U0SRELEAD', editTo(1, { service: 'api', namespace: 'staging' })));
    };
    await sweepAt(CREATED_AT + 6 * MINUTE);
    expect(edit).toMatchObject({ recorded: true, effect: { kind: 'new-version' } });
    expect((await store.getStep(step.stepId))?.escalation?.nextAt).toBe(CREATED_AT + 6 * MINUTE);
    expect(await store.dueSteps({ kind: 'escalation', now: CREATED_AT + 6 * MINUTE, limit: 10 })).toEqual([step.stepId]);
    await sweepAt(CREATED_AT + 6 * MINUTE + 5_000);
    expect(notices.filter((text) => text.includes('Reminder'))).toEqual([expect.stringContaining('<@U0STAGEOWNER>')]);
  });
});
