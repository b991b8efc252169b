import type { Logger } from 'pino';
import { type MessageTakeBacks, stepRecords } from '../conversation/message-take-back.js';
import type { CardCopyTarget, ThreadMessenger } from '../conversation/thread-messenger.js';
import { isFencedError } from '../store/fenced-error.js';
import type { StepStore } from '../store/state-store.js';
import { callRouting, missingCopyTargets } from './card-routing.js';
import { type CardCopy, type PendingStep, undecidedCalls } from './pending-step.js';
import { approversLetDecide } from './policy/approvers-let-decide.js';
import type { CurrentEvaluation } from './policy/governing-policy.js';

/**
 * Posts the copies of a step's card that its routing asks for and it does not have yet (when the
 * card is first posted, and for approvers an escalation hop adds). Each is recorded as soon as it is
 * posted, so clicks on it count; one that fails is logged and the rest still go out. A copy that
 * loses its record to another process's (`takeBackLosingCopy`) is removed and not counted, and so
 * is one whose record failed (`takeBackUnrecordedCopy`). A fenced write (or `stop()` saying the
 * caller lost its thread) is thrown. Resolves with how many were posted.
 * With `currentEvaluation` (the config in force), a DM goes only to someone it lets decide too.
 */
export async function postMissingCopies(options: {
  store: Pick<StepStore, 'recordCardCopy' | 'getStep'>;
  messenger: ThreadMessenger;
  /** Removes a copy whose record failed, kept in the store and tried again while Slack refuses. */
  takeBacks: Pick<MessageTakeBacks, 'takeBack'>;
  logger: Logger;
  step: PendingStep;
  stop?: () => boolean;
  currentEvaluation?: CurrentEvaluation | undefined;
}): Promise<number> {
  const { store, messenger, logger, step } = options;
  const missing = missingCopyTargets(step);
  const targets: CardCopyTarget[] = [
    ...missing.channels.map((channel) => ({ kind: 'channel' as const, channel })),
    ...(await dmsLetDecide({ step, userIds: missing.dmUserIds, currentEvaluation: options.currentEvaluation, logger })).map((userId) => ({ kind: 'dm' as const, userId })),
  ];
  let posted = 0;
  for (const target of targets) {
    try {
      const copy = await messenger.postStepCopy({ step, target });
      const recorded = await store.recordCardCopy(step.stepId, copy).catch(async (error: unknown) => {
        if (await takeBackUnrecordedCopy({ ...options, copy, error })) return copy;
        // Taken back and logged as unrecorded: posted, so not a copy that could not be posted. The caller's lost thread still ends the loop.
        if (isFencedError(error) || options.stop?.()) throw error;
        return 'taken-back' as const;
      });
      if (recorded === 'taken-back') continue;
      if (recorded !== undefined && recorded.ts !== copy.ts) {
        await takeBackLosingCopy({ takeBacks: options.takeBacks, logger, step, copy, recorded });
        continue;
      }
      posted += 1;
    } catch (error) {
      if (isFencedError(error) || options.stop?.()) throw error;
      logger.warn({ event: 'card-copy-failed', stepId: step.stepId, target, err: error }, 'could not post a copy of the approval card');
    }
  }
  return posted;
}

/**
 * Removes `copy`, posted while another process posted one in the same channel and recorded it first
 * (both read the step without it: a recorded edit's copies and a card refresh's, or an escalation
 * hop's): only the recorded copy is updated as the step changes, so this one would keep live buttons
 * nobody updates. A kept take-back: what Slack will not remove now is tried again by the sweep.
 */
async function takeBackLosingCopy({ takeBacks, logger, step, copy, recorded }: { takeBacks: Pick<MessageTakeBacks, 'takeBack'>; logger: Logger; step: PendingStep; copy: CardCopy; recorded: CardCopy }): Promise<void> {
  logger.warn({ event: 'card-copy-taken-back', stepId: step.stepId, channel: copy.channel, ts: copy.ts, recordedTs: recorded.ts }, 'another copy of the approval card was recorded in this channel first; this one is removed');
  await takeBacks.takeBack({ channel: copy.channel, ts: [copy.ts], threadKey: step.threadKey, stepId: step.stepId });
}

/**
 * After `copy`'s record failed: false (the copy taken back) unless the step records it, the write
 * having landed with its reply lost. Left in Slack unrecorded, the copy's buttons would refuse every
 * click (not the step's card) and it would never show the request decided. Its removal is a kept
 * take-back, tried again while Slack refuses; when the record cannot be read again either, the
 * take-back reads it before removing the copy (and, when Redis cannot keep it, offers it to Redis
 * until it answers).
 */
async function takeBackUnrecordedCopy(options: {
  store: Pick<StepStore, 'getStep'>;
  takeBacks: Pick<MessageTakeBacks, 'takeBack'>;
  logger: Logger;
  step: PendingStep;
  copy: CardCopy;
  error: unknown;
}): Promise<boolean> {
  const { store, takeBacks, logger, step, copy, error } = options;
  const onRecord = await store.getStep(step.stepId).then(
    (stored) => stepRecords(stored, copy),
    () => undefined,
  );
  if (onRecord) return true;
  logger.warn({ event: 'card-copy-unrecorded', stepId: step.stepId, channel: copy.channel, ts: copy.ts, recordUnknown: onRecord === undefined, err: error }, 'could not record a copy of the approval card; it is removed');
  await takeBacks.takeBack({ channel: copy.channel, ts: [copy.ts], threadKey: step.threadKey, stepId: step.stepId, ...(onRecord === undefined ? { recordUnknown: true } : {}) });
  return false;
}

/**
 * The step with the copies its routing asks for and lacks posted (`postMissingCopies`), read again
 * when any were: drawn from it, the thread's card shows where they wait. A failure to post them is
 * logged with `failure` (what that leaves undone) and the step answered as it was: its card is
 * still drawn.
 */
export async function withMissingCopies(options: {
  store: Pick<StepStore, 'recordCardCopy' | 'getStep'>;
  messenger: ThreadMessenger;
  takeBacks: Pick<MessageTakeBacks, 'takeBack'>;
  logger: Logger;
  step: PendingStep;
  currentEvaluation?: CurrentEvaluation | undefined;
  failure: string;
}): Promise<PendingStep> {
  const { store, logger, step } = options;
  const posted = await postMissingCopies(options).catch((error: unknown) => {
    logger.warn({ event: 'card-copy-failed', stepId: step.stepId, err: error }, options.failure);
    return 0;
  });
  return posted > 0 ? ((await store.getStep(step.stepId)) ?? step) : step;
}

/**
 * The approvers to DM whom the config in force lets decide a waiting call that DMs them, as a hop
 * announces only those: the card's policy is stored with it, and after a deploy that took someone
 * off the rule (a fallback approver swapped) a DM would hand them the request's input and buttons
 * that refuse them.
 */
async function dmsLetDecide({ step, userIds, currentEvaluation, logger }: { step: PendingStep; userIds: string[]; currentEvaluation: CurrentEvaluation | undefined; logger: Logger }): Promise<string[]> {
  if (!currentEvaluation) return userIds;
  const waiting = undecidedCalls(step);
  const sent: string[] = [];
  for (const userId of userIds) {
    const calls = waiting.filter((call) => callRouting(step, call)?.dmUserIds.includes(userId));
    const letDecide = await approversLetDecide({ step, calls, approvers: [{ kind: 'user', userId }], currentEvaluation });
    if (calls.length > 0 && letDecide.length > 0) sent.push(userId);
    else logger.info({ event: 'card-copy-withheld', stepId: step.stepId, userId }, 'the config in force does not let this approver decide; no DM copy');
  }
  return sent;
}
