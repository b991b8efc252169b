import type { Logger } from 'pino';
import { appendQuietly, type AuditLog } from '../audit/audit-log.js';
import type { ThreadMessenger } from '../conversation/thread-messenger.js';
import type { ThreadWorker } from '../conversation/thread-worker.js';
import { buildApprovalCard } from '../slack/blocks/approval-card.js';
import type { StateStore } from '../store/state-store.js';
import { isQuestion, undecidedCalls, type PendingStep } from './pending-step.js';
import { reminderMentions } from './policy/describe-approvers.js';

/** Due work handled per sweep; the rest waits for the next one, so one sweep stays short. */
const BATCH = 20;
/** Decisions made by the clock rather than a person carry this as their user. */
export const EXPIRY_USER = 'countersign';

export interface ExpirySweeperOptions {
  store: StateStore;
  messenger: ThreadMessenger;
  worker: ThreadWorker;
  audit: AuditLog;
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
  const { store, messenger, worker, audit, logger, now } = options;
  let timer: NodeJS.Timeout | undefined;
  let sweeping: Promise<void> | undefined;

  async function remind(step: PendingStep): Promise<void> {
    const waiting = undecidedCalls(step).filter((call) => !isQuestion(call) && call.policy);
    if (waiting.length === 0 || step.phase !== 'pending') return;
    const mentions = new Set(
      waiting.flatMap((call) =>
        reminderMentions({ evaluation: call.policy!, requesterId: step.requesterId, approvedBy: (step.approvals?.[call.approvalId] ?? []).map((a) => a.userId) })
          .split(' ')
          .filter(Boolean),
      ),
    );
    const names = [...new Set(waiting.map((call) => `\`${call.toolName}\``))].join(', ');
    const expires = step.expiresAt === undefined ? '' : ` It expires <!date^${Math.floor(step.expiresAt / 1000)}^{date_short_pretty} at {time}|soon>.`;
    await messenger.postMention({
      channel: step.channel,
      threadTs: step.threadTs,
      text: `:bell: ${[...mentions].join(' ')}${mentions.size > 0 ? ' ' : ''}Approval still needed for ${names}.${expires}`,
    });
  }

  async function expire(stepId: string): Promise<void> {
    const step = await store.expireStep(stepId, { outcome: 'expired', userId: EXPIRY_USER, at: now() });
    if (!step) return;
    for (const call of step.calls) {
      if (step.decisions[call.approvalId]?.outcome !== 'expired') continue;
      await appendQuietly(audit, { type: 'expired', teamId: step.teamId, stepId, approvalId: call.approvalId, toolName: call.toolName }, logger);
    }
    if (step.cardTs !== undefined) {
      await messenger.updateCard({ channel: step.channel, ts: step.cardTs, card: buildApprovalCard({ step }) }).catch((error: unknown) => {
        logger.warn({ event: 'card-update-failed', stepId, err: error }, 'could not mark the card expired');
      });
    }
    logger.info({ event: 'approval-expired', stepId }, 'approval request expired');
    await worker.submit(step.threadKey, { kind: 'resume', stepId, channel: step.channel, threadTs: step.threadTs });
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
