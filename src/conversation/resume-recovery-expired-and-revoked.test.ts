import type { ModelMessage } from 'ai';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { COUNTERSIGN_ACTOR, denialReason, resumeToolMessage } from '../agent/decision-messages.js';
import { makeStep } from '../approvals/pending-step.test-support.js';
import type { Decision, PendingStep } from '../approvals/pending-step.js';
import { createMemoryAuditLog } from '../audit/memory-audit-log.js';
import { defaultConfig } from '../config/config-file.js';
import { createMemoryStore } from '../store/memory-store.js';
import { newThreadState, type ThreadState } from '../store/thread-state.js';
import { withWithdrawals } from './carried-approvals.js';
import { createStepResumer } from './resume-step.js';
import type { TurnScope } from './turn-scope.js';

/**
 * A step of two calls: apv-1 expired unanswered (its rule: onExpiry stop), apv-2 was approved. The
 * claim judged the turn NOT stopped (an approved call), wrote the resume message (apv-2 approved)
 * and its process stopped before running apv-2. The process that took the resume over
 * (`recoverInterruptedResume` → `rejudgeInterruptedResume`) found apv-2's approval no longer holds
 * (its approver left the group, or a deploy changed the rule) and, in one write, closed it on the
 * step (denied by countersign) and told the history so (`withWithdrawals`); then it asked the model
 * to go on, and stopped (stall / kill) before the model's answer was saved.
 *
 * A third process takes the resume over. The step now reads expired + denied, which `stopsOnExpiry`
 * (added to recovery by ff09060) takes for a turn its policy ended at the claim: recovery returns
 * false. But the claim did not end it (no closing message, no unpostedStopNotice): the turn was
 * going on. Nothing is posted, the model is never asked, and no sweep offers the step again (it is
 * `resumed`): the thread is silent for good.
 */
describe('recovery of a resume whose approval an earlier recovery revoked, beside an expired call', () => {
  const asked: ModelMessage = {
    role: 'assistant',
    content: [
      { type: 'tool-call', toolCallId: 'call_0', toolName: 'restart_service', input: { service: 'api', namespace: 'staging' } },
      { type: 'tool-approval-request', approvalId: 'apv-1', toolCallId: 'call_0' },
      { type: 'tool-call', toolCallId: 'call_1', toolName: 'restart_service', input: { service: 'api', namespace: 'staging' } },
      { type: 'tool-approval-request', approvalId: 'apv-2', toolCallId: 'call_1' },
    ],
  };
  const expiredDecision: Decision = { outcome: 'expired', userId: 'U0ALICE', at: 1_700_000_000_000 };

  function setup(firstDecision: Decision) {
    // As the claim saw it: apv-2 approved.
    const atClaim = makeStep(['apv-1', 'apv-2'], {
      phase: 'resumed',
      decisions: { 'apv-1': firstDecision, 'apv-2': { outcome: 'approved', userId: 'U0BOB', at: 1_700_000_000_000, version: 0, approvedBy: ['U0BOB'] } },
    });
    // As the interrupted recovery's rejudge left it: apv-2 closed by countersign, on the step and in the history.
    const revoked: Decision = { outcome: 'denied', userId: COUNTERSIGN_ACTOR, at: 1_700_000_100_000, reason: 'the approval by <@U0BOB> no longer holds (Only members of <!subteam^S0OPS> can approve this)' };
    const step: PendingStep = { ...atClaim, decisions: { ...atClaim.decisions, 'apv-2': revoked } };
    const messages = withWithdrawals([{ role: 'user', content: 'restart the api twice' }, asked, resumeToolMessage(atClaim)], [{ approval: { approvalId: 'apv-2' }, told: denialReason(revoked) }]);
    const stored: ThreadState = { ...newThreadState(step, 1_700_000_000_000), messages };

    const logger = pino({ level: 'silent' });
    const ran: string[] = [];
    const notices: string[] = [];
    const resumer = createStepResumer({
      store: createMemoryStore(),
      audit: createMemoryAuditLog({ logger }),
      logger,
      now: Date.now,
      policy: defaultConfig().policy,
      tools: [],
      resolveGroups: async () => new Map(),
      loadThread: async () => {
        throw new Error('not reached');
      },
      runAndPublish: async (_scope, _thread, requesterId) => {
        ran.push(requesterId);
      },
      closeInterruptedCalls: async () => {},
      cards: { postUnpostedCard: async () => false },
    });
    const scope = {
      lease: { fence: { threadKey: step.threadKey, token: '1' } },
      messenger: {
        postNotice: async ({ text }: { text: string }) => void notices.push(text),
        updateStepCard: async () => {},
      },
      saveAtEnd: () => {},
    } as unknown as TurnScope;
    const resume = () => resumer.resume(scope, step.stepId, { stepId: step.stepId, step, thread: stored });
    return { resume, ran, notices, requesterId: step.requesterId };
  }

  it('control: with the other call denied by a person instead of expired, the turn goes on (the model is asked)', async () => {
    const { resume, ran, requesterId } = setup({ outcome: 'denied', userId: 'U0CAROL', at: 1_700_000_000_000 });
    await resume();
    expect(ran).toEqual([requesterId]);
  });

  it('with the other call expired, the thread still gets its turn finished (or at least a notice), not silence', async () => {
    const { resume, ran, notices, requesterId } = setup(expiredDecision);
    await resume();
    expect({ ran, notices }, 'the turn the claim let go on was abandoned: no model answer, no notice').toEqual({ ran: [requesterId], notices: [] });
  });
});
