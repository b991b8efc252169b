import type { Logger } from 'pino';
import { appendQuietly, type AuditLog } from '../audit/audit-log.js';
import type { ThreadWorker } from '../conversation/thread-worker.js';
import type { ThreadMessenger } from '../conversation/thread-messenger.js';
import { buildApprovalCard } from '../slack/blocks/approval-card.js';
import type { StateStore } from '../store/state-store.js';
import { crashPoint } from '../testing/crash-point.js';
import { findCall } from './find-call.js';
import type { CallEdit, Decision, PendingCall, PendingStep } from './pending-step.js';
import { approverGroupIds, type GroupMembers } from './policy/approver-eligibility.js';
import { authorizeApprover } from './policy/authorize-approver.js';
import { whoCanApprove } from './policy/describe-approvers.js';
import { escalates } from './policy/escalates.js';
import type { PolicyEvaluation } from './policy/evaluate-policy.js';

export interface DecideCallOptions {
  store: StateStore;
  messenger: ThreadMessenger;
  worker: ThreadWorker;
  logger: Logger;
  audit: AuditLog;
  /** Members of the user groups a policy names (cached `usergroups.users.list`). */
  resolveGroups: (groupIds: readonly string[]) => Promise<GroupMembers>;
  /** The policy's answer for an edited input, to catch edits that raise the stakes. */
  evaluateInput?: (options: { step: PendingStep; call: PendingCall; input: unknown }) => Promise<PolicyEvaluation>;
  now?: () => number;
}

export interface CallDecisionRequest {
  stepId: string;
  approvalId: string;
  userId: string;
  outcome: 'approved' | 'denied' | 'answered';
  reason?: string;
  edit?: CallEdit;
  answer?: unknown;
}

export type RecordOutcome =
  | { recorded: true; step: PendingStep; completedStep: boolean }
  /** Nothing changed; `message` tells the person why, in their words. */
  | { recorded: false; message: string };

/**
 * Records human decisions and shows them. Who may decide is checked on every click and submit
 * against the policy stored with the call; the store then decides atomically who wins. Losers are
 * told who decided, and only the decision that completes the step queues the resume, so an approved
 * call runs once however many clicks, modals or processes race.
 */
export function createCallDecider(options: DecideCallOptions) {
  const { store, messenger, worker, logger, audit } = options;
  const now = options.now ?? Date.now;

  async function showDecisions(step: PendingStep): Promise<void> {
    let rendered = step;
    // No fixed number of rounds: while this update was on its way, the decision that completed the
    // step may have been shown by its own process, and this stale update landed after it. Stopping
    // early would leave buttons on calls that already ran. It ends: every round needs a newer
    // revision, and a pending step has only as many as its calls have decisions and approvals.
    while (rendered.cardTs !== undefined) {
      await messenger.updateCard({ channel: rendered.channel, ts: rendered.cardTs, card: buildApprovalCard({ step: rendered }) });
      // Decisions on other calls of a pending step can update the card out of order; once the step
      // is complete nothing can change any more, so only then is the rendering known to be final.
      if (rendered.phase !== 'pending') return;
      const latest = await store.getStep(rendered.stepId);
      if (!latest || latest.revision <= rendered.revision) return;
      rendered = latest;
    }
  }

  /**
   * An edit is judged by the policy for the edited input too: one that needs other approvers (or
   * more of them) than the original cannot ride on this approver's standing for the original.
   */
  async function escalatedEdit(step: PendingStep, call: PendingCall, request: CallDecisionRequest): Promise<PolicyEvaluation | undefined> {
    if (!request.edit || !call.policy || !options.evaluateInput) return undefined;
    const after = await options.evaluateInput({ step, call, input: request.edit.input });
    return escalates({ before: call.policy, after }) ? after : undefined;
  }

  /** Is this person allowed to decide this call now? A refusal is audited and explained. */
  async function refusal(step: PendingStep, call: PendingCall, request: CallDecisionRequest): Promise<string | undefined> {
    if (!call.policy || request.outcome === 'answered') return undefined;
    const escalated = await escalatedEdit(step, call, request);
    const evaluation = escalated ?? call.policy;
    const groupMembers = await options.resolveGroups(approverGroupIds(evaluation));
    const authorization = authorizeApprover({
      evaluation,
      userId: request.userId,
      requesterId: step.requesterId,
      groupMembers,
      approvedBy: (step.approvals?.[call.approvalId] ?? []).map((approval) => approval.userId),
      action: request.outcome === 'denied' ? 'deny' : 'approve',
    });
    // A quorum for the edited input cannot be gathered on a call approved under the original rule.
    const needsMore = escalated !== undefined && escalated.required > 1;
    if (authorization.allowed && !needsMore) return undefined;
    const reason = escalated
      ? `This edit raises the stakes: it needs approval from ${whoCanApprove(escalated)}${escalated.required > 1 ? ` (${escalated.required} approvals)` : ''}, so it was not run. Ask one of them, or deny and ask again`
      : authorization.allowed
        ? ''
        : authorization.reason;
    await appendQuietly(
      audit,
      {
        type: 'unauthorized-attempt',
        teamId: step.teamId,
        stepId: step.stepId,
        approvalId: call.approvalId,
        toolName: call.toolName,
        userId: request.userId,
        action: request.edit ? 'edit' : request.outcome === 'denied' ? 'deny' : 'approve',
        reason,
      },
      logger,
    );
    return `${reason}, so nothing changed.`;
  }

  /** The atomic part: fast (a few store round trips), so it fits inside a modal submit's ack window. */
  async function record(request: CallDecisionRequest): Promise<RecordOutcome> {
    const decision: Decision = {
      outcome: request.outcome,
      userId: request.userId,
      at: now(),
      ...(request.reason ? { reason: request.reason } : {}),
      ...(request.edit ? { edit: request.edit } : {}),
      ...(request.outcome === 'answered' ? { answer: request.answer ?? null } : {}),
    };
    let result;
    try {
      const lookup = await findCall(store, request);
      if (!lookup.open) {
        const decided = lookup.call && lookup.step?.decisions[lookup.call.approvalId];
        return { recorded: false, message: decided ? alreadyDecidedText(decided) : lookup.message };
      }
      const refused = await refusal(lookup.step, lookup.call, request);
      if (refused) return { recorded: false, message: refused };
      const required = request.outcome === 'approved' ? (lookup.call.policy?.required ?? 1) : 1;
      result = await store.decide({ stepId: request.stepId, approvalId: request.approvalId, decision, required });
    } catch (error) {
      logger.error({ event: 'decision-store-failed', stepId: request.stepId, err: error }, 'could not record decision');
      return { recorded: false, message: ':warning: I could not record your decision, so nothing changed. Please try again.' };
    }
    switch (result.status) {
      case 'not-found':
        return { recorded: false, message: 'This approval request is no longer open.' };
      case 'already-decided':
        return { recorded: false, message: alreadyDecidedText(result.decision) };
      case 'already-approved-by-you':
        return { recorded: false, message: 'You already approved this; it needs another approver, so nothing changed.' };
      case 'closed':
        return { recorded: false, message: 'This approval request was already closed, so nothing changed.' };
      case 'partial':
      case 'recorded': {
        crashPoint('after-decision');
        const call = result.step.calls.find((candidate) => candidate.approvalId === request.approvalId);
        const need = call?.policy?.required ?? 1;
        await appendQuietly(
          audit,
          {
            type: 'decision',
            teamId: result.step.teamId,
            stepId: request.stepId,
            approvalId: request.approvalId,
            toolName: call?.toolName ?? 'unknown',
            outcome: request.outcome,
            userId: request.userId,
            originalInput: call?.input,
            ...(request.edit ? { editedInput: request.edit.input } : {}),
            ...(request.reason ? { reason: request.reason } : {}),
            ...(need > 1 && request.outcome === 'approved'
              ? { quorum: { have: result.status === 'partial' ? (result.step.approvals?.[request.approvalId]?.length ?? 1) : need, need } }
              : {}),
          },
          logger,
        );
        return { recorded: true, step: result.step, completedStep: result.status === 'recorded' && result.completedStep };
      }
    }
  }

  /** The slow part, after Slack has its acknowledgement: update the card, resume if complete. */
  async function publish(outcome: Extract<RecordOutcome, { recorded: true }>): Promise<void> {
    const { step } = outcome;
    try {
      await showDecisions(step);
    } catch (error) {
      logger.warn({ event: 'card-update-failed', stepId: step.stepId, err: error }, 'could not update approval card');
    }
    if (outcome.completedStep) {
      await worker.submit(step.threadKey, { kind: 'resume', stepId: step.stepId, channel: step.channel, threadTs: step.threadTs });
    }
  }

  return { record, publish };
}

export type CallDecider = ReturnType<typeof createCallDecider>;

export function alreadyDecidedText(decision: Decision): string {
  switch (decision.outcome) {
    case 'approved':
      return `Already ${decision.edit ? 'edited and approved' : 'approved'} by <@${decision.userId}>, so nothing changed.`;
    case 'denied':
      return `Already denied by <@${decision.userId}>, so nothing changed.`;
    case 'superseded':
      return `This call was closed because <@${decision.userId}> sent a newer message, so nothing changed.`;
    case 'answered':
      return `Already answered by <@${decision.userId}>, so nothing changed.`;
    case 'expired':
      return 'This request expired before anyone decided, so nothing changed.';
  }
}
