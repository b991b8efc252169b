import type { Logger } from 'pino';
import type { PendingStep } from '../approvals/pending-step.js';
import type { PendingTakeBack, StateStore, TakeBackStore } from '../store/state-store.js';
import { KEPT_RETRIES, type KeptRetrySchedule, type KeptTry, keepUntilStoreAnswers, retryDueKept, runOwnTries } from './kept-retries.js';
import type { ThreadMessenger, UndeletedMessages } from './thread-messenger.js';

/** Messages posted in `threadKey` that nothing records (see `takeBackUnrecorded`), to be removed. */
export interface MessagesToTakeBack {
  channel: string;
  ts: readonly string[];
  threadKey: string;
  /** Cards of this step (on record as its `cardTs` or one of its `copies`) rather than answers (on record in the thread's `answerTs`). */
  stepId?: string;
  /**
   * The messages may be on record after all (a record whose reply was lost, and that could not be
   * read again): none is removed before the store says it is not on record.
   */
  recordUnknown?: boolean;
}

export interface MessageTakeBacks {
  /**
   * Removes the messages. What Slack would not remove now (an outage, rate limits) is kept in the
   * store and tried again: here a few times over some seconds (a blip), then by the sweep
   * (`retryDue`), whichever process runs it, until it is removed or a day has passed. One the store
   * could not keep either (Redis out) is offered to it again in the background until it answers.
   */
  takeBack(messages: MessagesToTakeBack): Promise<void>;
  /** The sweep's part: tries again the kept take-backs that are due. Never throws: failures are logged. */
  retryDue(options?: { stopping?: AbortSignal }): Promise<void>;
}

type Tried = KeptTry<'removed' | 'on-record'>;

/**
 * The take-back of messages a process that lost its thread posted but never recorded (the new
 * holder shows the same text again): one failed `chat.delete` must not leave the answer twice.
 */
export function createMessageTakeBacks(options: {
  store: Pick<StateStore, 'getThread' | 'getStep' | keyof TakeBackStore>;
  messenger: Pick<ThreadMessenger, 'deleteMessages'>;
  logger: Logger;
  now?: () => number;
  /** How this process waits between its tries and its offers to the store; tests give one that moves their clock. */
  pause?: (ms: number) => Promise<void>;
  /** When to try again; default `KEPT_RETRIES`. */
  schedule?: KeptRetrySchedule;
}): MessageTakeBacks {
  const { store, messenger, logger, now = Date.now, schedule = KEPT_RETRIES } = options;
  const pause = options.pause ?? ((ms) => new Promise<void>((resolve) => setTimeout(resolve, ms)));

  /**
   * Whether the message is on record now (the thread's answer, the step's card or a copy of it):
   * then it is not this take-back's to remove, whatever was found when it was made. Undefined when
   * unreadable.
   */
  const onRecord = async ({ threadKey, stepId, channel, ts }: PendingTakeBack): Promise<boolean | undefined> => {
    try {
      if (stepId !== undefined) return stepRecords(await store.getStep(stepId), { channel, ts });
      return (await store.getThread(threadKey))?.answerTs?.includes(ts) ?? false;
    } catch {
      return undefined;
    }
  };

  const tryAgain = async (takeBack: PendingTakeBack): Promise<Tried> => {
    const recorded = await onRecord(takeBack);
    if (recorded === undefined) return { done: false };
    if (recorded) return { done: true, outcome: 'on-record' };
    const left = await messenger.deleteMessages({ channel: takeBack.channel, ts: [takeBack.ts] });
    if (left.ts.length === 0) return { done: true, outcome: 'removed' };
    return { done: false, ...(left.retryAfterMs === undefined ? {} : { retryAfterMs: left.retryAfterMs }) };
  };

  /**
   * Said once per take-back: by whoever forgot its record, or the process that could never keep it
   * (`unkept`: the store did not answer for a day, so Slack may never have been asked).
   */
  const reportEnd = (takeBack: PendingTakeBack, outcome: 'removed' | 'on-record' | 'given-up', { unkept = false } = {}) => {
    const fields = { event: outcome === 'given-up' ? 'take-back-given-up' : 'take-back-done', outcome, threadKey: takeBack.threadKey, channel: takeBack.channel, ts: takeBack.ts, failingMs: now() - takeBack.since, ...(unkept ? { unkept } : {}) };
    if (outcome !== 'given-up') logger.info(fields, 'a message not removed at first is taken back');
    else if (unkept) logger.error(fields, 'the store did not answer for a day, so a message the thread may not record was neither kept for the sweep nor removed; it may show the answer twice, or a card copy with live buttons');
    else logger.error(fields, 'Slack would not remove a message the thread does not record; it may show the answer twice');
  };

  /**
   * After the own tries of take-backs the store could not keep: offered to it until it answers, due at
   * once, so the sweep removes them (a Sentinel failover's 30 s outlasts the own tries). Not awaited.
   */
  const keepLate = async (takeBacks: readonly PendingTakeBack[], since: number): Promise<void> => {
    const kept = await keepUntilStoreAnswers({
      since,
      keep: () => Promise.all(takeBacks.map((takeBack) => store.scheduleTakeBack(takeBack, now()))),
      stillDown: (failingMs) =>
        logger.warn({ event: 'take-back-store-still-down', threadKey: takeBacks[0]?.threadKey, ts: takeBacks.map((each) => each.ts), failingMs }, 'the store has not answered for minutes: a take-back is offered to it again, less often, until it answers (for up to a day)'),
      now,
      // The offers outlive the caller: keepUntilStoreAnswers' own timer does not hold a stopping process open (unless a test's is injected).
      pause: options.pause,
      schedule,
    });
    if (kept) logger.info({ event: 'take-back-kept-late', threadKey: takeBacks[0]?.threadKey, ts: takeBacks.map((each) => each.ts), failingMs: now() - since }, 'kept a take-back once the store answered; the sweep removes the message');
    else for (const takeBack of takeBacks) reportEnd(takeBack, 'given-up', { unkept: true });
  };

  return {
    async takeBack({ channel, ts, threadKey, stepId, recordUnknown = false }) {
      if (ts.length === 0) return;
      // Maybe on record: left to the tries below, which read the record before each removal.
      const left: UndeletedMessages = recordUnknown ? { ts: [...ts] } : await messenger.deleteMessages({ channel, ts });
      if (left.ts.length === 0) return;
      const since = now();
      let pending: PendingTakeBack[] = left.ts.map((each) => ({ channel, ts: each, threadKey, ...(stepId === undefined ? {} : { stepId }), since }));
      // Kept first: this process has lost its thread and may be stopping (or stall again) before its tries end.
      const kept = await Promise.all(pending.map((takeBack) => store.scheduleTakeBack(takeBack, since + schedule.ownTriesMs))).then(
        () => true,
        (error: unknown) => {
          logger.warn({ event: 'take-back-unkept', threadKey, ts: left.ts, recordUnknown, err: error }, 'could not keep a take-back for the sweep; this process tries again, then offers it to the store until it answers');
          return false;
        },
      );
      const done = await runOwnTries({
        schedule,
        since,
        retryAfterMs: left.retryAfterMs,
        now,
        pause,
        tryOnce: async () => {
          let retryAfterMs = 0;
          const still: PendingTakeBack[] = [];
          for (const takeBack of pending) {
            const tried = await tryAgain(takeBack);
            if (!tried.done) {
              still.push(takeBack);
              retryAfterMs = Math.max(retryAfterMs, tried.retryAfterMs ?? 0);
              continue;
            }
            // A record that could not be forgotten is found by the sweep, which finds the message gone and reports it.
            const forgot = kept ? await store.forgetTakeBack(takeBack).catch(() => false) : true;
            if (forgot) reportEnd(takeBack, tried.outcome);
          }
          pending = still;
          return pending.length === 0 ? { done: true } : { done: false, retryAfterMs };
        },
      });
      // Not awaited: the caller goes on; what the store takes late is the sweep's.
      if (!done && !kept) void keepLate(pending, since);
    },

    async retryDue({ stopping } = {}) {
      try {
        await retryDueKept({
          due: (options) => store.dueTakeBacks(options),
          claim: (takeBack, claim) => store.claimTakeBack(takeBack, claim),
          postpone: (takeBack, until) => store.postponeTakeBack(takeBack, until),
          forget: (takeBack) => store.forgetTakeBack(takeBack),
          tryAgain,
          reportEnd,
          now,
          stopping,
          schedule,
        });
      } catch (error) {
        logger.warn({ event: 'take-back-retry-failed', err: error }, 'could not try kept take-backs again; the next sweep does');
      }
    },
  };
}

/** Whether `message` is the step's card or its recorded copy in that channel. */
export function stepRecords(step: PendingStep | undefined, message: { channel: string; ts: string }): boolean {
  if (!step) return false;
  return step.cardTs === message.ts || (step.copies ?? []).some((copy) => copy.channel === message.channel && copy.ts === message.ts);
}
