import { describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { createMemoryAuditLog } from '../audit/memory-audit-log.js';
import { parseConfigFile } from '../config/config-file.js';
import { createMemoryStore } from '../store/memory-store.js';
import { newThreadState } from '../store/thread-state.js';
import { createTestDecider } from './decide-call.test-support.js';
import { makeStep } from './pending-step.test-support.js';
import { evaluatePolicy } from './policy/evaluate-policy.js';
import { recheckApprovals } from './recheck-approvals.js';

/**
 * An edit that moves a call under a rule with a shorter expiry is judged against the new
 * rule's deadline only by the clicking replica's own clock; the write carries the deadline of the
 * version it replaced (`applyCallAction` computes `transition.deadline` before the edit), so the
 * store (Redis's `TIME`) does not refuse it. With the editor an approver of the new rule (quorum 1)
 * the edit decides the call: a prod restart approved after the prod rule's 10-minute expiry by the
 * clock every replica shares. README: "the deadline is judged by Redis's clock, TIME, in the write
 * that records the action, so a replica whose clock runs behind cannot record an approval after it",
 * and "An edit made when the request is already older than the new rule's expiry is refused".
 */
const config = parseConfigFile(
  `
policy:
  rules:
    - name: staging restarts
      tools: [restart_service]
      input:
        - { field: namespace, equals: staging }
      approvers: [U0LEAD]
      expiry: 1h
    - name: prod restarts
      tools: [restart_service]
      input:
        - { field: namespace, equals: prod }
      approvers: [U0LEAD]
      expiry: 10m
`,
  'test.yml',
);

const logger = pino({ level: 'silent' });
const MINUTE = 60_000;

describe('an edit to a rule with a shorter expiry, from a replica whose clock is behind', () => {
  it('is refused by the shared clock once the request is older than the new rule allows', async () => {
    const requestedAt = Date.UTC(2026, 10, 21, 12, 0);
    // The store's clock stands for Redis's TIME; the replica taking the form runs 2 minutes behind.
    const clocks = { store: requestedAt, replica: requestedAt };
    const audit = createMemoryAuditLog({ logger });
    const store = createMemoryStore({ audit, now: () => clocks.store });
    const { decider } = createTestDecider({
      store,
      audit,
      resolveGroups: async () => new Map(),
      evaluateInput: async ({ input }) => evaluatePolicy({ policy: config.policy, toolName: 'restart_service', channel: 'C0OPS', input }),
      now: () => clocks.replica,
    });
    const staging = { service: 'api', namespace: 'staging' };
    const policy = evaluatePolicy({ policy: config.policy, toolName: 'restart_service', channel: 'C0OPS', input: staging });
    const step = makeStep([{ approvalId: 'apv1', input: staging, policy }], { requesterId: 'U0ALICE', createdAt: requestedAt, expiresAt: requestedAt + 60 * MINUTE });
    const token = (await store.tryLock(step.threadKey, 60_000))!;
    await store.createStep({ step, thread: { ...newThreadState(step, 1), pendingStepId: step.stepId }, ttlMs: 3_600_000, audit: [], fence: { threadKey: step.threadKey, token } });
    await store.releaseLockIfIdle({ threadKey: step.threadKey, token }, 60_000);

    // 11 minutes after the request by the shared clock: past the prod rule's 10 minutes. The replica says 9.
    clocks.store = requestedAt + 11 * MINUTE;
    clocks.replica = requestedAt + 9 * MINUTE;
    const prod = { service: 'api', namespace: 'prod' };
    const outcome = await decider.record({
      stepId: step.stepId,
      approvalId: 'apv1',
      userId: 'U0LEAD',
      origin: { teamId: step.teamId, channel: step.channel, membership: 'member' },
      action: { kind: 'edit', fromVersion: 0, input: prod, submittedInput: prod },
    });
    const stored = (await store.getStep(step.stepId))!;
    // Nor does the check at resume catch it: the approval is dated by the replica's clock.
    const recheck = await recheckApprovals({
      step: stored,
      resolveGroups: async () => new Map(),
      currentEvaluation: async ({ input }) => evaluatePolicy({ policy: config.policy, toolName: 'restart_service', channel: 'C0OPS', input }),
      now: clocks.store,
    });
    expect({
      recorded: outcome.recorded,
      decision: stored.decisions.apv1?.outcome,
      stillApprovedAtResume: recheck.step.decisions.apv1?.outcome === 'approved',
    }).toEqual({ recorded: false, decision: undefined, stillApprovedAtResume: false });
    // Told what a replica with the right clock would have said: the edit, not the request, came too late.
    // The staging restart the card shows can still be approved within its hour.
    expect(outcome.recorded ? undefined : outcome.message).toMatch(/expire 10m after they are made.*cannot be approved as edited.*can still be approved or denied/);
    expect({ phase: stored.phase, versions: stored.calls[0]?.versions?.length, expiresAt: stored.expiresAt }).toEqual({ phase: 'pending', versions: 1, expiresAt: requestedAt + 60 * MINUTE });
  });
});
