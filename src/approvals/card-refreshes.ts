import type { Logger } from 'pino';
import { KEPT_RETRIES, type KeptRetrySchedule, keepUntilStoreAnswers, retryDueKept, runOwnTries } from '../conversation/kept-retries.js';
import type { MessageTakeBacks } from '../conversation/message-take-back.js';
import type { ThreadMessenger } from '../conversation/thread-messenger.js';
import { ErrorCode, hasErrorCode, slackMayTakeItLater, slackRetryAfterMs, type UnconfirmedCardPost } from '../errors/countersign-error.js';
import type { PendingCardRefresh, StateStore } from '../store/state-store.js';
import { type CardRefreshOutcome, type CardRefreshTry, createCardReposts, firstCardPost } from './card-reposts.js';
import type { PendingStep } from './pending-step.js';
import { showLatestStep } from './show-latest-step.js';

export interface CardRefreshes {
  /**
   * Draws the step's thread card again after its update failed (`error`), from the step as it is
   * then: kept in the store first, tried again here a few times over some seconds, then by the
   * sweep (`retryDue`), whichever process runs it. Never throws: failures are logged.
   * `untilStoreAnswers`: when neither the record nor the own tries got through (the store itself
   * unreachable: a decision whose reply was lost), the record is offered again in the background,
   * for up to the schedule's give-up (`offerUntilStoreAnswers`), so the card is drawn once the store is back.
   */
  redraw(options: { stepId: string; error: unknown; untilStoreAnswers?: boolean }): Promise<void>;
  /** The sweep's part: tries again the kept refreshes that are due. Never throws: failures are logged. */
  retryDue(options?: { stopping?: AbortSignal }): Promise<void>;
}

type Outcome = CardRefreshOutcome;
type Tried = CardRefreshTry;

type Dependencies = {
  store: Pick<StateStore, 'getStep' | 'setStepCard' | 'replaceStepCard' | 'scheduleCardRefresh' | 'postponeCardRefresh' | 'claimCardRefresh' | 'dueCardRefreshes' | 'forgetCardRefresh'>;
  messenger: Pick<ThreadMessenger, 'updateStepCard' | 'updateStepCopy' | 'postStepCard' | 'findPostedCard' | 'permalinkOf' | 'postNotice'>;
  /** For a card posted again that could not be recorded: it would keep live buttons nobody updates. */
  takeBacks: Pick<MessageTakeBacks, 'takeBack'>;
  logger: Logger;
  now?: () => number;
  pause?: (ms: number) => Promise<void>;
  /** When to try again; default `KEPT_RETRIES`. */
  schedule?: KeptRetrySchedule;
  /**
   * Posts the copies an open step's routing asks for and it lacks, answering the step as it then
   * stands (`withMissingCopies`): run before its card is drawn again. A decision whose outcome was
   * not known posts none itself: an edit that landed under a rule routed elsewhere would never be
   * shown to that rule's approvers.
   */
  copies?: (step: PendingStep) => Promise<PendingStep>;
};

/**
 * Keeps a card whose update failed for the sweep alone, due at once: for a caller that must not
 * wait for tries of its own (a turn, a sweep). `refresh`: one kept already for this card, made due
 * now. Never throws.
 */
export async function keepCardToRedraw({
  store,
  stepId,
  logger,
  at,
  refresh = { stepId, since: at },
}: {
  store: Pick<StateStore, 'scheduleCardRefresh'>;
  stepId: string;
  logger: Logger;
  at: number;
  refresh?: PendingCardRefresh;
}): Promise<void> {
  await keepCardRefresh({ store, refresh, at, logger, unkept: 'could not keep a card Slack would not update; it shows an earlier state until the step changes again' });
}

/**
 * Keeps a card refresh for the sweep, due `at`; false, and logged with `unkept` (what that leaves
 * the card to), when the store would not keep it: every caller goes on without it. Never throws.
 */
export function keepCardRefresh({ store, refresh, at, logger, unkept }: { store: Pick<StateStore, 'scheduleCardRefresh'>; refresh: PendingCardRefresh; at: number; logger: Logger; unkept: string }): Promise<boolean> {
  return store.scheduleCardRefresh(refresh, at).then(
    () => true,
    (error: unknown) => {
      logger.warn({ event: 'card-refresh-unkept', stepId: refresh.stepId, err: error }, unkept);
      return false;
    },
  );
}

/**
 * Keeps a look for a step's first card, whose post Slack may have applied though its reply was lost,
 * when the thread could not be read to find it (`CardPostUnconfirmedError`): the request stays open
 * (the card's clicks decide), and the sweep looks for the card, records it once found (so decisions
 * and expiry show on it), or posts the card if Slack did not. Due at once. False, logged, when the
 * store would not keep it. Never throws.
 */
export function keepFirstCardToFind({ store, step, post, logger, at }: { store: Pick<StateStore, 'scheduleCardRefresh'>; step: PendingStep; post: UnconfirmedCardPost; logger: Logger; at: number }): Promise<boolean> {
  const refresh = { stepId: step.stepId, since: at, unconfirmed: firstCardPost(step, post) };
  return keepCardRefresh({ store, refresh, at, logger, unkept: 'could not keep the look for an approval card whose post lost its reply' });
}

/** What the log says of a refresh done, by its outcome. */
const endText: Record<Outcome, string> = {
  shown: 'an approval card Slack would not update at first is drawn again',
  'posted-again': 'an approval card Slack would not update at first is drawn again',
  told: 'an approval card Slack would not update is left as it was; the thread was told',
  gone: 'an approval card Slack would not update at first is drawn again',
  unconfirmed: 'an approval card Slack would not update was posted again, whether Slack posted it is not known; it is looked for later',
  'notice-owed': 'an approval card Slack would not update was posted again and recorded; the thread could not be told, it is told later',
};

/**
 * The card of a step whose update Slack failed (a rate limit past the client's retries, an outage,
 * a refusal) is drawn again, not left showing a state the server no longer judges clicks by: after
 * an edit, approvers would be refused for approving the version on the card, and its Edit button
 * as stale, until the request expired. A card Slack still refuses on a later try (`invalid_blocks`,
 * `message_not_found`, `cant_update_message`) is posted again in the thread while the request is
 * open, with buttons for the version waiting, and a notice says what became of the request.
 */
export function createCardRefreshes(options: Dependencies): CardRefreshes {
  const { store, messenger, takeBacks, logger, now = Date.now, pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms)), schedule = KEPT_RETRIES, copies } = options;

  /** Shows the step, and again while it changed meanwhile (`showLatestStep`). */
  const showLatest = (step: PendingStep): Promise<void> => showLatestStep({ store, messenger, step, logger });

  // A card Slack refuses for good posted again, a first card looked for or posted, and the thread told (card-reposts.ts).
  const { postAgain, settleUnconfirmed, postFirstCard, tellOwed } = createCardReposts({
    store,
    messenger,
    takeBacks,
    logger,
    now,
    schedule,
    showLatest,
    redrawLater: (stepId) => keepCardToRedraw({ store, stepId, logger, at: now() }),
  });

  /**
   * Draws the copies of a step with no card on record ('gone' when it has none). Only a copy Slack
   * failed for now throws (one refused for good is logged), so any failure is tried again later.
   */
  const showCopies = async (step: PendingStep): Promise<Tried> => {
    if ((step.copies ?? []).length === 0) return { done: true, outcome: 'gone' };
    try {
      await showLatest(step);
      return { done: true, outcome: 'shown' };
    } catch (error) {
      logger.warn({ event: 'card-copy-refresh-failed', stepId: step.stepId, err: error }, 'could not draw the copies of an approval card again; they are tried again later');
      const retryAfterMs = slackRetryAfterMs(error);
      return { done: false, ...(retryAfterMs === undefined ? {} : { retryAfterMs }) };
    }
  };

  const tryAgain = async (refresh: PendingCardRefresh): Promise<Tried> => {
    const { stepId } = refresh;
    try {
      const step = await store.getStep(stepId);
      if (refresh.unconfirmed?.recorded !== undefined) return await tellOwed(step, refresh.unconfirmed.recorded);
      // A card this refresh posted may stand in the thread: nothing else is posted before it is found, or found absent.
      if (refresh.unconfirmed !== undefined) {
        const settled = await settleUnconfirmed(stepId, refresh.unconfirmed);
        if (settled !== 'absent') return settled;
        // The step's first card, not posted after all: nobody could decide on a card nobody sees.
        if (refresh.unconfirmed.replacing === undefined && step?.cardTs === undefined && step?.phase === 'pending') return await postFirstCard(refresh, step);
      }
      if (step === undefined) return { done: true, outcome: 'gone' };
      // No card on record: never posted (whoever posts it shows the step as it is then), or its first
      // post's outcome not known (its look records it, or posts it while the step is open). Copies
      // posted all the same are drawn now: nothing else would, and the one a decision was made on
      // would keep "waiting" and live buttons after the call ran.
      // The copies its routing asks for and lacks go out first (an edit whose reply was lost moved the call under another rule).
      const withCopies = copies && step.phase === 'pending' ? await copies(step) : step;
      if (step.cardTs === undefined) return await showCopies(withCopies);
      const shown = { ...withCopies, cardTs: step.cardTs };
      try {
        await showLatest(shown);
        return { done: true, outcome: 'shown' };
      } catch (error) {
        // Only Slack's own refusal is for good; a rate limit, an outage or the store is tried again later.
        if (!hasErrorCode(error, ErrorCode.SlackCallFailed) || slackMayTakeItLater(error)) {
          const retryAfterMs = slackRetryAfterMs(error);
          return { done: false, ...(retryAfterMs === undefined ? {} : { retryAfterMs }) };
        }
        return await postAgain(refresh, shown, error);
      }
    } catch (error) {
      logger.warn({ event: 'card-refresh-failed', stepId, err: error }, 'could not draw an approval card again; it is tried again later');
      return { done: false };
    }
  };

  /** Said once per refresh: by whoever forgot its record. */
  const reportEnd = (refresh: PendingCardRefresh, outcome: Outcome | 'given-up') => {
    const fields = { event: outcome === 'given-up' ? 'card-refresh-given-up' : 'card-refresh-done', outcome, stepId: refresh.stepId, failingMs: now() - refresh.since };
    if (outcome === 'given-up') {
      const left =
        refresh.unconfirmed === undefined
          ? 'it shows an earlier state'
          : refresh.unconfirmed.recorded !== undefined
            ? `a card posted again (${refresh.unconfirmed.recorded}) stands below the earlier one, and the thread was never told why`
            : refresh.unconfirmed.replacing === undefined
              ? `the request's first card, whose post lost its reply, was never found nor found absent; if Slack posted it (ts unknown, mark ${refresh.unconfirmed.mark}), its clicks decide but it is never updated`
              : `a card posted again whose reply was lost was never found nor found absent; if Slack posted it (ts unknown, mark ${refresh.unconfirmed.mark}), it keeps live buttons nobody updates`;
      logger.error(fields, `Slack would not update an approval card (for a day, or for the tries of a process that could not keep it for the sweep); ${left}`);
    } else logger.info(fields, endText[outcome]);
  };

  /**
   * Offers `refresh` to the store until it takes it (`keepUntilStoreAnswers`, for up to the schedule's
   * give-up): the clicker was told the card follows once Redis answers, and a primary's restart with a
   * big AOF or a network partition can outlast minutes. Timers do not hold a stopping process open: one
   * that stops drops it, and the step's expiry or next change draws the card.
   */
  const offerUntilStoreAnswers = async (refresh: PendingCardRefresh): Promise<void> => {
    const kept = await keepUntilStoreAnswers({
      since: refresh.since,
      keep: () => store.scheduleCardRefresh(refresh, now()),
      stillDown: (failingMs) =>
        logger.warn(
          { event: 'card-refresh-store-still-down', stepId: refresh.stepId, failingMs },
          'the store has not answered for minutes: an approval card whose decision could not be confirmed shows an earlier state; it is offered to the store again, less often, until it answers (for up to a day)',
        ),
      now,
      // The injected pause (a test's clock), else keepUntilStoreAnswers' timer, which does not hold a stopping process open.
      pause: options.pause,
      schedule,
    });
    if (!kept) return reportEnd(refresh, 'given-up');
    logger.info({ event: 'card-refresh-kept-late', stepId: refresh.stepId, failingMs: now() - refresh.since }, 'kept a card to draw again once the store answered; the sweep draws it');
  };

  return {
    async redraw({ stepId, error, untilStoreAnswers = false }) {
      const since = now();
      const refresh = { stepId, since };
      // Kept first: this process may stop (or Slack fail) for longer than its own tries last.
      const kept = await keepCardRefresh({ store, refresh, at: since + schedule.ownTriesMs, logger, unkept: 'could not keep a card Slack would not update; only this process tries again' });
      const done = await runOwnTries({
        schedule,
        since,
        retryAfterMs: slackRetryAfterMs(error),
        now,
        pause,
        tryOnce: async () => {
          const tried = await tryAgain(refresh);
          if (!tried.done) return tried;
          // A record that could not be forgotten is found by the sweep, which shows the card once more and forgets it.
          const forgot = kept ? await store.forgetCardRefresh(refresh).catch(() => false) : true;
          if (forgot) reportEnd(refresh, tried.outcome);
          return tried;
        },
      });
      if (done || kept) return;
      // Not awaited: the caller (a click's answer) goes on; the card is the sweep's once the record is kept.
      if (untilStoreAnswers) void offerUntilStoreAnswers(refresh);
      else reportEnd(refresh, 'given-up');
    },

    async retryDue({ stopping } = {}) {
      try {
        await retryDueKept({
          due: (options) => store.dueCardRefreshes(options),
          claim: (refresh, claim) => store.claimCardRefresh(refresh, claim),
          postpone: (refresh, until) => store.postponeCardRefresh(refresh, until),
          forget: (refresh) => store.forgetCardRefresh(refresh),
          tryAgain,
          reportEnd,
          now,
          stopping,
          schedule,
        });
      } catch (error) {
        logger.warn({ event: 'card-refresh-retry-failed', err: error }, 'could not try kept card refreshes again; the next sweep does');
      }
    },
  };
}
