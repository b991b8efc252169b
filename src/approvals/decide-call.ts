import type { Logger } from 'pino';
import type { ThreadWorker } from '../conversation/thread-worker.js';
import type { ThreadMessenger } from '../conversation/thread-messenger.js';
import { buildApprovalCard } from '../slack/blocks/approval-card.js';
import type { StateStore } from '../store/state-store.js';
import type { CallEdit, Decision, PendingStep } from './pending-step.js';

export interface DecideCallOptions {
  store: StateStore;
  messenger: ThreadMessenger;
  worker: ThreadWorker;
  logger: Logger;
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

/** How many times a card is re-rendered when decisions race with the update that shows them. */
const MAX_CARD_REFRESHES = 3;

/**
 * Records human decisions and shows them. The store decides atomically who wins; losers are told
 * who decided, and only the decision that completes the step queues the resume, so an approved
 * call runs once however many clicks, modals or processes race.
 */
export function createCallDecider(options: DecideCallOptions) {
  const { store, messenger, worker, logger } = options;
  const now = options.now ?? Date.now;

  async function showDecisions(step: PendingStep): Promise<void> {
    let rendered = step;
    for (let attempt = 0; attempt < MAX_CARD_REFRESHES && rendered.cardTs !== undefined; attempt += 1) {
      await messenger.updateCard({ channel: rendered.channel, ts: rendered.cardTs, card: buildApprovalCard({ step: rendered }) });
      // Two clicks on different calls can update the card out of order; re-render if state moved on.
      const latest = await store.getStep(rendered.stepId);
      if (!latest || latest.revision <= rendered.revision) return;
      rendered = latest;
    }
  }

  /** The atomic part: fast (one store round trip), so it fits inside a modal submit's ack window. */
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
      result = await store.decide({ stepId: request.stepId, approvalId: request.approvalId, decision });
    } catch (error) {
      logger.error({ event: 'decision-store-failed', stepId: request.stepId, err: error }, 'could not record decision');
      return { recorded: false, message: ':warning: I could not record your decision, so nothing changed. Please try again.' };
    }
    switch (result.status) {
      case 'not-found':
        return { recorded: false, message: 'This approval request is no longer open.' };
      case 'already-decided':
        return { recorded: false, message: alreadyDecidedText(result.decision) };
      case 'closed':
        return { recorded: false, message: 'This approval request was already closed, so nothing changed.' };
      case 'recorded':
        logger.info(
          { event: 'approval-decided', stepId: request.stepId, approvalId: request.approvalId, outcome: request.outcome, edited: Boolean(request.edit), userId: request.userId },
          'decision recorded',
        );
        return { recorded: true, step: result.step, completedStep: result.completedStep };
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

function alreadyDecidedText(decision: Decision): string {
  switch (decision.outcome) {
    case 'approved':
      return `Already ${decision.edit ? 'edited and approved' : 'approved'} by <@${decision.userId}>, so nothing changed.`;
    case 'denied':
      return `Already denied by <@${decision.userId}>, so nothing changed.`;
    case 'superseded':
      return `This call was closed because <@${decision.userId}> sent a newer message, so nothing changed.`;
    case 'answered':
      return `Already answered by <@${decision.userId}>, so nothing changed.`;
  }
}
