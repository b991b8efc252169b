import { closingToolMessage } from '../agent/decision-messages.js';
import type { ApprovalRequest } from '../agent/run-turn.js';
import type { AuditEventInput } from '../audit/audit-event.js';
import type { PendingStep } from '../approvals/pending-step.js';
import { describeApprovers } from '../approvals/policy/describe-approvers.js';
import { closeStepTransition } from '../approvals/transitions/close-step.js';
import { commitTransition } from '../approvals/transitions/commit-transition.js';
import { isFencedError } from '../store/fenced-error.js';
import type { ThreadState } from '../store/thread-state.js';
import { buildPendingStep } from './build-pending-step.js';
import type { PhaseDependencies } from './phase-dependencies.js';
import type { TurnScope } from './turn-scope.js';

type StepCardDependencies = Pick<PhaseDependencies, 'store' | 'logger' | 'now' | 'botUserId' | 'policy' | 'tools' | 'newStepId' | 'limits'>;

/** A step's life on its card: opened with its records, posted (or closed if it cannot be), refreshed after a change. */
export function createStepCards(options: StepCardDependencies) {
  const { store, logger, now } = options;
  // Looked up per call: the tool list is live (MCP servers connect late and reconnect).
  const definitionOf = (toolName: string) => options.tools.find((tool) => tool.name === toolName);

  /**
   * The step, the thread that points at it and the `approval-requested` records are one write,
   * made before the card exists, so a click that arrives immediately finds its step.
   */
  async function openStep(scope: TurnScope, thread: ThreadState, requesterId: string, requests: ApprovalRequest[]): Promise<PendingStep> {
    const step = await buildPendingStep({
      thread,
      requesterId,
      requests,
      policy: options.policy,
      definitionOf,
      stepId: options.newStepId(thread.threadKey),
      botUserId: options.botUserId,
      now: now(),
    });
    thread.pendingStepId = step.stepId;
    thread.updatedAt = now();
    await scope.lease.guard(() => store.createStep({ step, thread, ttlMs: options.limits.historyTtlMs, audit: approvalRequested(step), fence: scope.lease.fence }));
    return step;
  }

  /** Posts a step's card; if Slack refuses it, the step is closed so nothing waits on a card no one sees. */
  async function postCardFor(scope: TurnScope, step: PendingStep): Promise<void> {
    try {
      const cardTs = await scope.messenger.postStepCard({ step });
      await store.setStepCard(step.stepId, cardTs);
      logger.info({ event: 'approval-requested', stepId: step.stepId, calls: step.calls.map((call) => call.toolName) }, 'approval card posted');
    } catch (error) {
      if (scope.lease.lost()) throw error;
      logger.error({ event: 'card-post-failed', stepId: step.stepId, err: error }, 'could not post approval card');
      const decision = { outcome: 'denied' as const, userId: options.botUserId, at: now(), reason: 'the approval card could not be posted' };
      const closed = await scope.lease.guard(() =>
        commitTransition(store, step.stepId, (current) => {
          const transition = closeStepTransition(current, decision);
          return transition && { ...transition, fence: scope.lease.fence };
        }),
      );
      if (closed) {
        const thread = await store.getThread(step.threadKey);
        if (thread) {
          thread.messages.push(closingToolMessage(closed));
          delete thread.pendingStepId;
          await scope.save(thread, { settled: true });
        }
      }
      await scope.messenger.postNotice({ channel: step.channel, threadTs: step.threadTs, text: ':warning: I could not post the approval card, so nothing was run. Please try again.' });
    }
  }

  /** Shows a step's new state on its card; a card Slack will not update is logged, not fatal. */
  async function refreshCard(scope: TurnScope, step: PendingStep): Promise<void> {
    if (step.cardTs === undefined) return;
    try {
      await scope.messenger.updateStepCard({ step: { ...step, cardTs: step.cardTs } });
    } catch (error) {
      if (isFencedError(error)) throw error;
      logger.warn({ event: 'card-update-failed', stepId: step.stepId, err: error }, 'could not update approval card');
    }
  }

  return { openStep, postCardFor, refreshCard };
}

export type StepCards = ReturnType<typeof createStepCards>;

/** The `approval-requested` records of a new step, one per call, written with the step. */
function approvalRequested(step: PendingStep): AuditEventInput[] {
  return step.calls.map((call) => ({
    type: 'approval-requested',
    teamId: step.teamId,
    stepId: step.stepId,
    approvalId: call.approvalId,
    toolName: call.toolName,
    input: call.input,
    requesterId: step.requesterId,
    channel: step.channel,
    threadTs: step.threadTs,
    ...(call.policy ? { approvers: describeApprovers(call.policy) } : {}),
    ...(step.expiresAt === undefined ? {} : { expiresAt: step.expiresAt }),
  }));
}
