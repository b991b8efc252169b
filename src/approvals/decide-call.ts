import type { Logger } from 'pino';
import type { ThreadWorker } from '../conversation/thread-worker.js';
import type { ThreadMessenger } from '../conversation/thread-messenger.js';
import { buildApprovalCard } from '../slack/blocks/approval-card.js';
import type { StateStore } from '../store/state-store.js';
import type { Decision, PendingStep } from './pending-step.js';

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
  outcome: 'approved' | 'denied';
  reason?: string;
  /** Where to answer the clicker privately when the click changes nothing. */
  channel: string;
  threadTs?: string;
}

/** How many times a card is re-rendered when decisions race with the update that shows them. */
const MAX_CARD_REFRESHES = 3;

/**
 * Records one human decision and shows it. The store decides atomically who wins; losers are told
 * privately who decided, and only the decision that completes the step queues the resume, so an
 * approved call runs once however many clicks or processes race.
 */
export function createCallDecider(options: DecideCallOptions) {
  const { store, messenger, worker, logger } = options;
  const now = options.now ?? Date.now;

  const tellClicker = (request: CallDecisionRequest, text: string) =>
    messenger
      .postEphemeral({ channel: request.channel, userId: request.userId, ...(request.threadTs ? { threadTs: request.threadTs } : {}), text })
      .catch((error: unknown) => logger.warn({ event: 'ephemeral-failed', err: error }, 'could not answer clicker'));

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

  return async function decideCall(request: CallDecisionRequest): Promise<void> {
    const decision: Decision = {
      outcome: request.outcome,
      userId: request.userId,
      at: now(),
      ...(request.reason ? { reason: request.reason } : {}),
    };
    let result;
    try {
      result = await store.decide({ stepId: request.stepId, approvalId: request.approvalId, decision });
    } catch (error) {
      logger.error({ event: 'decision-store-failed', stepId: request.stepId, err: error }, 'could not record decision');
      await tellClicker(request, ':warning: I could not record your decision, so nothing changed. Please try again.');
      return;
    }
    switch (result.status) {
      case 'not-found':
        await tellClicker(request, 'This approval request is no longer open.');
        return;
      case 'already-decided':
        await tellClicker(request, alreadyDecidedText(result.decision));
        return;
      case 'closed':
        await tellClicker(request, 'This approval request was already closed, so your click changed nothing.');
        return;
      case 'recorded':
        break;
    }
    const step = result.step;
    logger.info(
      { event: 'approval-decided', stepId: step.stepId, approvalId: request.approvalId, outcome: request.outcome, userId: request.userId },
      'decision recorded',
    );
    try {
      await showDecisions(step);
    } catch (error) {
      logger.warn({ event: 'card-update-failed', stepId: step.stepId, err: error }, 'could not update approval card');
    }
    if (result.completedStep) {
      await worker.submit(step.threadKey, { kind: 'resume', stepId: step.stepId, channel: step.channel, threadTs: step.threadTs });
    }
  };
}

function alreadyDecidedText(decision: Decision): string {
  switch (decision.outcome) {
    case 'approved':
      return `Already approved by <@${decision.userId}>, so your click changed nothing.`;
    case 'denied':
      return `Already denied by <@${decision.userId}>, so your click changed nothing.`;
    case 'superseded':
      return `This call was closed because <@${decision.userId}> sent a newer message, so your click changed nothing.`;
  }
}
