import type { Logger } from 'pino';
import type { CardCopyTarget, ThreadMessenger } from '../conversation/thread-messenger.js';
import { isFencedError } from '../store/fenced-error.js';
import type { StepStore } from '../store/state-store.js';
import { stepRouting } from './card-routing.js';
import type { PendingStep } from './pending-step.js';

/**
 * Posts the copies of a step's card that its routing asks for and it does not have yet (when the
 * card is first posted, and for approvers an escalation hop adds). Each is recorded as soon as it is
 * posted, so clicks on it count; one that fails is logged and the rest still go out. A fenced write
 * (or `stop()` saying the caller lost its thread) is thrown. Resolves with how many were posted.
 */
export async function postMissingCopies(options: {
  store: Pick<StepStore, 'recordCardCopy'>;
  messenger: ThreadMessenger;
  logger: Logger;
  step: PendingStep;
  stop?: () => boolean;
}): Promise<number> {
  const { store, messenger, logger, step } = options;
  const routing = stepRouting(step);
  const copies = step.copies ?? [];
  const targets: CardCopyTarget[] = [
    ...routing.channels.filter((channel) => !copies.some((copy) => copy.kind === 'channel' && copy.channel === channel)).map((channel) => ({ kind: 'channel' as const, channel })),
    ...routing.dmUserIds.filter((userId) => !copies.some((copy) => copy.kind === 'dm' && copy.userId === userId)).map((userId) => ({ kind: 'dm' as const, userId })),
  ];
  let posted = 0;
  for (const target of targets) {
    try {
      const copy = await messenger.postStepCopy({ step, target });
      await store.recordCardCopy(step.stepId, copy);
      posted += 1;
    } catch (error) {
      if (isFencedError(error) || options.stop?.()) throw error;
      logger.warn({ event: 'card-copy-failed', stepId: step.stepId, target, err: error }, 'could not post a copy of the approval card');
    }
  }
  return posted;
}
