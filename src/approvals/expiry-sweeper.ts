import type { Logger } from 'pino';
import type { ThreadMessenger } from '../conversation/thread-messenger.js';
import type { ThreadWorker } from '../conversation/thread-worker.js';
import type { StateStore } from '../store/state-store.js';
import { approvalsOf, currentVersion } from './input-version.js';
import { isQuestion, undecidedCalls, type PendingStep } from './pending-step.js';
import { reminderMentions } from './policy/describe-approvers.js';
import { expireTransition } from './transitions/close-step.js';
import { commitTransition } from './transitions/commit-transition.js';

export { EXPIRY_USER } from './transitions/close-step.js';

/** Due work handled per sweep; the rest waits for the next one, so one sweep stays short. */
const BATCH = 20;

export interface ExpirySweeperOptions {
  store: StateStore;
  messenger: ThreadMessenger;
  worker: ThreadWorker;
  logger: Logger;
  now: () => number;
  intervalMs?: number;
  /** Further upkeep run on the same schedule (recovery of work a dead process left). */
  alsoRun?: () => Promise<void>;
}

/**
 * Expiry and reminders, driven by schedules in the store rather than in-process timers, so they
 * happen across restarts and with several bot processes: every process sweeps, and the store lets
 * exactly one of them expire a step (or send a reminder).
 */
export function createExpirySweeper(options: ExpirySweeperOptions) {
  const { store, messenger, worker, logger, now } = options;
  let timer: NodeJS.Timeout | undefined;
  let sweeping: Promise<void> | undefined;

  async function remind(step: PendingStep): Promise<void> {
    const waiting = undecidedCalls(step).filter((call) => !isQuestion(call) && currentVersion(call));
    if (waiting.length === 0 || step.phase !== 'pending') return;
    const mentions = new Set(
      waiting.flatMap((call) => {
        const version = currentVersion(call)!;
        const approvedBy = approvalsOf(step, call, version.number).map((approval) => approval.userId);
        return reminderMentions({ evaluation: version.policy, requesterId: step.requesterId, approvedBy }).split(' ').filter(Boolean);
      }),
    );
    const names = [...new Set(waiting.map((call) => `\`${call.toolName}\``))].join(', ');
    const expires = step.expiresAt === undefined ? '' : ` It expires <!date^${Math.floor(step.expiresAt / 1000)}^{date_short_pretty} at {time}|soon>.`;
    await messenger.postMention({
      channel: step.channel,
      threadTs: step.threadTs,
      text: `:bell: ${[...mentions].join(' ')}${mentions.size > 0 ? ' ' : ''}Approval still needed for ${names}.${expires}`,
    });
  }

  /** Closes the step if its expiry has passed; exactly one process (or click) wins it. */
  async function expire(stepId: string): Promise<void> {
    const stored = await store.getStep(stepId);
    // Gone (its key expired) or closed some other way: nothing left to expire, ever.
    if (stored?.phase !== 'pending') return store.unschedule(stepId);
    const step = await commitTransition(store, stepId, (current) => expireTransition(current, { now: now() }));
    if (!step) return;
    if (step.cardTs !== undefined) {
      await messenger.updateStepCard({ step: { ...step, cardTs: step.cardTs } }).catch((error: unknown) => {
        logger.warn({ event: 'card-update-failed', stepId, err: error }, 'could not mark the card expired');
      });
    }
    logger.info({ event: 'approval-expired', stepId }, 'approval request expired');
    await worker.submit(step.threadKey, { kind: 'resume', stepId, channel: step.channel, threadTs: step.threadTs, ...(step.traceparent ? { traceparent: step.traceparent } : {}) });
  }

  async function sweepOnce(): Promise<void> {
    const at = now();
    for (const stepId of await store.dueSteps({ kind: 'reminder', now: at, limit: BATCH })) {
      if (!(await store.claimReminder(stepId))) continue;
      const step = await store.getStep(stepId);
      if (step) await remind(step).catch((error: unknown) => logger.warn({ event: 'reminder-failed', stepId, err: error }, 'could not send reminder'));
    }
    for (const stepId of await store.dueSteps({ kind: 'expiry', now: at, limit: BATCH })) await expire(stepId);
    await options.alsoRun?.();
  }

  return {
    sweepOnce,
    expireNow: expire,
    start() {
      timer = setInterval(() => {
        // One sweep at a time per process; a slow one is not stacked on.
        sweeping ??= sweepOnce()
          .catch((error: unknown) => logger.warn({ event: 'sweep-failed', err: error }, 'expiry sweep failed'))
          .finally(() => {
            sweeping = undefined;
          });
      }, options.intervalMs ?? 5_000);
      timer.unref();
    },
    async stop() {
      clearInterval(timer);
      await sweeping;
    },
  };
}
