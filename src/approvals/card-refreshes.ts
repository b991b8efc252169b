import type { Logger } from 'pino';
import { KEPT_RETRIES, type KeptRetrySchedule, type KeptTry, keepUntilStoreAnswers, retryDueKept, runOwnTries } from '../conversation/kept-retries.js';
import type { MessageTakeBacks } from '../conversation/message-take-back.js';
import { shortError } from '../conversation/short-error.js';
import type { ThreadMessenger } from '../conversation/thread-messenger.js';
import { ErrorCode, hasErrorCode, slackMayTakeItLater, slackRetryAfterMs, type UnconfirmedCardPost, unconfirmedCardPostOf } from '../errors/countersign-error.js';
import type { PendingCardRefresh, StateStore, UnconfirmedRepost } from '../store/state-store.js';
import { copiesLinkToCard } from './card-routing.js';
import type { PendingStep } from './pending-step.js';
import { showStep } from './show-step.js';
import { stepStateText } from './step-state-text.js';

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

/**
 * `told`: the card could not be posted again (or the request is closed): only the thread was told.
 * `unconfirmed`: whether Slack posted the card again is not known: a refresh of its own looks for it.
 * `notice-owed`: a card posted again was recorded, the thread not told: a refresh of its own tells it.
 */
type Outcome = 'shown' | 'posted-again' | 'told' | 'gone' | 'unconfirmed' | 'notice-owed';
type Tried = KeptTry<Outcome>;
type NotDone = Extract<Tried, { done: false }>;
/** A card posted again and recorded. */
type Reposted = { ts: string };

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

/** A step's first card whose post's outcome is not known: no card it replaces. */
function firstCardPost(step: PendingStep, post: UnconfirmedCardPost): UnconfirmedRepost {
  return { mark: post.mark, text: post.text, after: post.after, revision: step.revision, channel: step.channel, threadTs: step.threadTs, threadKey: step.threadKey };
}

/**
 * A card posted again whose post answered (`ts`), for the notice owed of it (`recorded`): nothing to
 * look for, so no mark and no text.
 */
function answeredRepost(step: PendingStep & { cardTs: string }, ts: string): UnconfirmedRepost {
  return { mark: '', text: '', after: ts, replacing: step.cardTs, revision: step.revision, channel: step.channel, threadTs: step.threadTs, threadKey: step.threadKey };
}

/** What the log says of a follow-up refresh kept (`keepFollowUp`), or not kept. */
type FollowUpTexts = { kept: { event: string; text: string }; unkept: { event: string; text: string } };

/** A card posted whose outcome is not known, looked for in a refresh of its own. */
const UNCONFIRMED_TEXTS: FollowUpTexts = {
  kept: { event: 'card-repost-unconfirmed', text: 'an approval card was posted again but whether Slack posted it is not known; it is looked for later' },
  unkept: { event: 'card-repost-unconfirmed-unkept', text: 'could not keep an approval card posted again whose reply was lost; if Slack posted it, it keeps live buttons nobody updates' },
};

/** A card posted again and recorded, whose notice is owed in a refresh of its own. */
const NOTICE_OWED_TEXTS: FollowUpTexts = {
  kept: { event: 'card-repost-notice-owed', text: 'an approval card was posted again and recorded but the thread could not be told; it is told later' },
  unkept: { event: 'card-repost-notice-unkept', text: 'could not keep the notice of an approval card posted again; the thread keeps the earlier card and the new one, untold why' },
};

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

  /**
   * Shows the step (its card, if one is on record, and its copies), and again while it changed
   * meanwhile: an update of an older revision may land after a newer one's.
   */
  const showLatest = async (step: PendingStep): Promise<void> => {
    let rendered = step;
    for (;;) {
      await showStep({ messenger, step: rendered, logger });
      const latest = await store.getStep(rendered.stepId);
      if (latest === undefined || (latest.revision <= rendered.revision && latest.cardTs === rendered.cardTs)) return;
      rendered = latest;
    }
  };

  /**
   * After a card posted again is recorded: it was drawn from the step as read before the post, and
   * the record checks only the card it replaces, so a click or an edit on another replica meanwhile
   * is on no card (the new one would offer an older version, or live buttons on a decided step, for
   * good; that replica's own card, posted again too, lost the record to this one and was taken back).
   * So the step is read again and, if it changed, the card is drawn again from it, as are the copies,
   * which link to the new card. A draw that fails is the sweep's.
   */
  const showAfterRepost = async (posted: PendingStep): Promise<void> => {
    try {
      const latest = await store.getStep(posted.stepId);
      if (latest?.cardTs === undefined || (latest.revision <= posted.revision && (latest.copies ?? []).length === 0)) return;
      await showLatest(latest);
    } catch (error) {
      logger.warn({ event: 'card-repost-redraw-failed', stepId: posted.stepId, err: error }, 'could not draw an approval card posted again as the request stands now; it is tried again later');
      await keepCardToRedraw({ store, stepId: posted.stepId, logger, at: now() });
    }
  };

  /**
   * A new card for an open step, recorded in place of the one Slack would not update (drawn again if
   * the step changed meanwhile). Undefined when Slack refused it; a try not done when Slack failed it for now (it posted
   * nothing) or the store its record; `unconfirmed` when Slack may have posted it but it could not be
   * looked for; else as `recordPosted`.
   */
  const postCardAgain = async (step: PendingStep & { cardTs: string }): Promise<Reposted | 'taken-back' | { unconfirmed: UnconfirmedCardPost } | NotDone | undefined> => {
    let fresh: string;
    try {
      fresh = await messenger.postStepCard({ step });
    } catch (error) {
      const unconfirmed = unconfirmedCardPostOf(error);
      if (unconfirmed !== undefined) return { unconfirmed };
      // Told "may show an earlier state" and forgotten, the card Slack would not update would stay the
      // step's only one for good: after an edit, its buttons offer a version every click is refused for.
      if (slackMayTakeItLater(error)) {
        logger.warn({ event: 'card-repost-failed', stepId: step.stepId, err: error }, 'could not post an approval card again for now; it is tried again later');
        const retryAfterMs = slackRetryAfterMs(error);
        return { done: false, ...(retryAfterMs === undefined ? {} : { retryAfterMs }) };
      }
      logger.warn({ event: 'card-repost-failed', stepId: step.stepId, err: error }, 'could not post an approval card again');
      return undefined;
    }
    const recorded = await recordPosted(step, fresh);
    return recorded === 'unrecorded' ? { done: false } : recorded;
  };

  /**
   * Records `fresh`, a card posted again from `step` (`step.cardTs`: the card it replaces), and draws
   * it again if the step changed since (`showAfterRepost`). Else it is taken back: 'taken-back' when another card was recorded first (another
   * process posted it again, draws it as the step stands after its record, and tells the thread);
   * 'unrecorded' when the store failed the record (nobody else's card is the step's: the refresh is
   * tried again, and posts a card again, unless a take-back that failed finds this one on record).
   */
  const recordPosted = async (step: PendingStep & { cardTs: string }, fresh: string): Promise<Reposted | 'taken-back' | 'unrecorded'> => {
    // Copies link to the thread's card: only then is the new one's link needed (the one replaced may have none: its link failed).
    const link = copiesLinkToCard(step) ? await linkOf(step, fresh) : undefined;
    const replaced = await store.replaceStepCard(step.stepId, { from: step.cardTs, to: fresh, ...(link === undefined ? {} : { link }) }).catch((error: unknown) => {
      logger.warn({ event: 'card-repost-unrecorded', stepId: step.stepId, err: error }, 'could not record an approval card posted again; it is taken back and posted again later');
      return 'failed' as const;
    });
    if (replaced === true || (replaced === 'failed' && (await onRecord(step.stepId, fresh)))) {
      await showAfterRepost(step);
      return { ts: fresh };
    }
    await takeBacks.takeBack({ channel: step.channel, ts: [fresh], threadKey: step.threadKey, stepId: step.stepId });
    return replaced === 'failed' ? 'unrecorded' : 'taken-back';
  };

  /**
   * The permalink of `ts`, a card this refresh posted or found, for its copies to link to; undefined
   * when Slack would not give it: the card is recorded without it (copies go without a link, as when
   * the turn posts a card), since a card posted and left unrecorded keeps live buttons nobody updates,
   * and one found would be recorded by no later try either.
   */
  const linkOf = (step: PendingStep, ts: string): Promise<string | undefined> =>
    messenger.permalinkOf({ channel: step.channel, ts }).catch((error: unknown) => {
      logger.warn({ event: 'card-link-failed', stepId: step.stepId, cardTs: ts, err: error }, 'could not read the link of an approval card; it is recorded without it, copies go without it');
      return undefined;
    });

  /**
   * Whether `ts` is the step's card on record, read again after a record that failed: this process's
   * own card, recorded by a write whose reply was lost. Then it is the step's only card with live
   * buttons: taken back, the request would be left with none. False when unreadable (the card is
   * taken back, as one unrecorded, and the refresh tried again).
   */
  const onRecord = async (stepId: string, ts: string): Promise<boolean> => {
    try {
      return (await store.getStep(stepId))?.cardTs === ts;
    } catch {
      return false;
    }
  };

  /**
   * Slack refuses the card's update, not for now: the card is posted again (an open request) and the
   * thread told. A card Slack may have posted though it could not be looked for is not forgotten: a
   * refresh of its own (`unconfirmed`) looks for it before any other card is posted for `refresh`.
   * One Slack failed for now is tried again later.
   */
  const postAgain = async (refresh: PendingCardRefresh, step: PendingStep & { cardTs: string }, error: unknown): Promise<Tried> => {
    const posted = step.phase === 'pending' ? await postCardAgain(step) : undefined;
    // Another process's card is the step's: it tells the thread.
    if (posted === 'taken-back') return { done: true, outcome: 'gone' };
    if (posted !== undefined && 'done' in posted) return posted;
    if (posted !== undefined && 'unconfirmed' in posted) {
      const unconfirmed: UnconfirmedRepost = { ...posted.unconfirmed, replacing: step.cardTs, revision: step.revision, channel: step.channel, threadTs: step.threadTs, threadKey: step.threadKey };
      if (await keepFollowUp(refresh.stepId, unconfirmed, error, UNCONFIRMED_TEXTS)) return { done: true, outcome: 'unconfirmed' };
      return { done: true, outcome: await tell(step, undefined, shortError(error), error) };
    }
    if (posted === undefined) return { done: true, outcome: await tell(step, undefined, shortError(error), error) };
    return tellPosted(step, posted, answeredRepost(step, posted.ts), error);
  };

  /**
   * Keeps a refresh of its own that follows up `followUp` (a card posted whose outcome is not known,
   * looked for first; or `recorded`, a card this sweep recorded whose notice is owed), in place of
   * the one that posted or found it: its caller forgets that one, done; kept before, so a process
   * that stops in between leaves both, not neither. Logged as `says` tells (`unkept`: what is left
   * when the store would not keep it; then false).
   */
  const keepFollowUp = async (stepId: string, followUp: UnconfirmedRepost, error: unknown, says: FollowUpTexts): Promise<boolean> => {
    const at = now();
    const card = followUp.recorded === undefined ? {} : { cardTs: followUp.recorded };
    try {
      // Its own `since`: the post is looked for (or the notice tried) a full day, not what is left of the refresh it follows.
      await store.scheduleCardRefresh({ stepId, since: at, unconfirmed: followUp }, at + schedule.sweepPauseMinMs);
    } catch (storeError) {
      logger.error({ event: says.unkept.event, stepId, ...card, err: storeError }, says.unkept.text);
      return false;
    }
    logger.warn({ event: says.kept.event, stepId, ...card, err: error }, says.kept.text);
    return true;
  };

  /**
   * A refresh's card posted again whose outcome was not known: found, it is recorded in place of the
   * card it replaces (drawn again from the step as it stands, the thread told), or taken back when
   * another card was recorded meanwhile or its step is gone. Found on record already, another
   * process's sweep recorded it (this one's claim lapsed during a slow look) and told the thread, or
   * owes the notice in a refresh of its own (`keepFollowUp`): nothing more is said; a step's first
   * card found on record is drawn if the step changed since it was. 'absent' when Slack did not post it.
   */
  const settleUnconfirmed = async (stepId: string, unconfirmed: UnconfirmedRepost): Promise<Tried | 'absent'> => {
    let found: string | undefined;
    try {
      found = await messenger.findPostedCard({ channel: unconfirmed.channel, threadTs: unconfirmed.threadTs, post: unconfirmed });
    } catch (error) {
      logger.warn({ event: 'card-repost-still-unconfirmed', stepId, err: error }, 'could not look for an approval card posted again whose reply was lost; it is looked for again later');
      return { done: false };
    }
    if (found === undefined) return 'absent';
    // Read again after the look: the record checks only the card replaced, so it cannot tell this write from the other sweep's.
    const step = await store.getStep(stepId);
    if (step?.cardTs === found) {
      if (unconfirmed.replacing !== undefined) return { done: true, outcome: 'gone' };
      // A first card recorded by an earlier try whose process stopped before drawing it (or whose
      // record's reply was lost and could not be read again): nobody else draws it, so a click that
      // decided before its record would leave its buttons live. Drawn if the step changed since.
      await showAfterRepost({ ...step, revision: unconfirmed.revision });
      return { done: true, outcome: 'shown' };
    }
    if (step === undefined) {
      await takeBacks.takeBack({ channel: unconfirmed.channel, ts: [found], threadKey: unconfirmed.threadKey, stepId });
      return { done: true, outcome: 'gone' };
    }
    if (unconfirmed.replacing === undefined) {
      const outcome = await recordFirstCard({ ...step, revision: unconfirmed.revision }, found, { posted: false });
      // Unrecorded: looked for again, found again and recorded then.
      return outcome === 'unrecorded' ? { done: false } : { done: true, outcome };
    }
    // Drawn from the step at `revision`: `recordPosted` draws it again if the step changed since.
    const posted = await recordPosted({ ...step, revision: unconfirmed.revision, cardTs: unconfirmed.replacing }, found);
    if (posted === 'taken-back') return { done: true, outcome: 'gone' };
    // Looked for again: found absent once taken back, and another card posted in its place.
    if (posted === 'unrecorded') return { done: false };
    return tellPosted(step, posted, unconfirmed, undefined);
  };

  /**
   * Records `ts` as the step's first card, drawn from `step` (`posted` by this refresh, or found
   * after its post lost its reply): drawn again if the step changed since (a click on it decides
   * before it is recorded), with its copies, which then link to it. Taken back when another card was
   * recorded first (a message in the thread posted one meanwhile, `postUnpostedCard`) or the step is
   * gone. The thread is not told: this is its card. 'unrecorded' when the store failed the record (a
   * write whose reply was lost, read again, is on record): a card this refresh posted is taken back
   * too, as `recordPosted` does, since its look, tried again, finds its mark's post absent and posts
   * another (left, the two would both decide, the first never updated); one found is found again.
   */
  const recordFirstCard = async (step: PendingStep, ts: string, { posted }: { posted: boolean }): Promise<'shown' | 'gone' | 'unrecorded'> => {
    // Copies link to the thread's card: only then is its link needed.
    const link = copiesLinkToCard(step) ? await linkOf(step, ts) : undefined;
    const recorded = await store.setStepCard(step.stepId, ts, link).then(
      (card) => card?.cardTs === ts,
      async (error: unknown) => {
        logger.warn({ event: 'card-post-unrecorded', stepId: step.stepId, cardTs: ts, err: error }, 'could not record the approval card of an open request; it is tried again later');
        return (await onRecord(step.stepId, ts)) || ('failed' as const);
      },
    );
    if (recorded === 'failed' && !posted) return 'unrecorded';
    if (recorded !== true) {
      await takeBacks.takeBack({ channel: step.channel, ts: [ts], threadKey: step.threadKey, stepId: step.stepId });
      return recorded === 'failed' ? 'unrecorded' : 'gone';
    }
    logger.warn({ event: 'card-post-found', stepId: step.stepId, cardTs: ts }, 'an approval card whose post lost its reply is recorded; decisions show on it from now on');
    await showAfterRepost({ ...step, cardTs: ts });
    return 'shown';
  };

  /**
   * A step's first card that Slack did not post after all (found absent): posted now, as the step
   * stands, and recorded. Posted with its reply lost and not found again, it is looked for in a
   * refresh of its own; refused, it is tried again later (the request's expiry still applies).
   */
  const postFirstCard = async (refresh: PendingCardRefresh, step: PendingStep): Promise<Tried> => {
    let fresh: string;
    try {
      fresh = await messenger.postStepCard({ step });
    } catch (error) {
      const unconfirmed = unconfirmedCardPostOf(error);
      if (unconfirmed !== undefined && (await keepFollowUp(refresh.stepId, firstCardPost(step, unconfirmed), error, UNCONFIRMED_TEXTS))) return { done: true, outcome: 'unconfirmed' };
      logger.warn({ event: 'card-post-failed', stepId: step.stepId, err: error }, 'could not post the approval card of an open request; it is tried again later');
      return { done: false };
    }
    const outcome = await recordFirstCard(step, fresh, { posted: true });
    return outcome === 'unrecorded' ? { done: false } : { done: true, outcome };
  };

  /**
   * Tells the thread of `posted`, a card this refresh recorded (`repost`: its post). When the notice
   * fails, it is owed in a refresh of its own: tried again as is, this one would find the card on
   * record, show it and say nothing, as a losing sweep does. Not done when that could not be kept.
   */
  const tellPosted = async (step: PendingStep, posted: Reposted, repost: UnconfirmedRepost, error: unknown): Promise<Tried> => {
    try {
      return { done: true, outcome: await tell(step, posted, undefined, error) };
    } catch (noticeError) {
      if (await keepFollowUp(step.stepId, { ...repost, recorded: posted.ts }, noticeError, NOTICE_OWED_TEXTS)) return { done: true, outcome: 'notice-owed' };
      return { done: false };
    }
  };

  /**
   * The notice owed for `recorded`, a card posted again that this refresh's sweep recorded: the card is
   * left as it is. Nothing is said when the step is gone or has another card since (whoever recorded
   * that one tells the thread), nor when the thread shows the notice below the card already: an
   * earlier try's whose reply was lost, or another sweep's whose claim outlasted this one's (a slow
   * post: a Retry-After waited out).
   */
  const tellOwed = async (step: PendingStep | undefined, recorded: string): Promise<Tried> => {
    if (step?.cardTs !== recorded) return { done: true, outcome: 'gone' };
    return { done: true, outcome: await tell(step, { ts: recorded }, undefined, undefined, recorded) };
  };

  /**
   * Tells the thread what became of a card Slack would not update: `posted` again, or left as it was
   * (`reason`: Slack's refusal). `unlessPostedAfter`: not when the thread has the same notice after
   * that message already. A card posted again is told without the refusal (the log has it, `error`):
   * the notice owed of it (`tellOwed`), which knows no refusal, looks for this very text; told with
   * it, the first would not be found and the thread told twice. Nor is a card posted again told with
   * the step's state (the card just above shows it): the step may change before the owed notice is
   * sent, and its text, drawn from the step then, would differ from the first's, told twice too.
   */
  const tell = async (step: PendingStep, posted: Reposted | undefined, reason: string | undefined, error: unknown, unlessPostedAfter?: string): Promise<'posted-again' | 'told'> => {
    const why = reason === undefined ? '' : ` (${reason})`;
    const text =
      posted === undefined
        ? `:warning: Slack would not update the approval card above${why}, so it may show an earlier state. ${stepStateText(step)}`
        : `:warning: Slack would not update the earlier approval card, so it is posted again just above, as the request stands now.`;
    await messenger.postNotice({ channel: step.channel, threadTs: step.threadTs, text, ...(unlessPostedAfter === undefined ? {} : { unlessPostedAfter }) });
    logger.warn({ event: posted === undefined ? 'card-not-updated' : 'card-posted-again', stepId: step.stepId, cardTs: posted?.ts, err: error }, 'Slack refused to update an approval card; the thread was told');
    return posted === undefined ? 'told' : 'posted-again';
  };

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
      if (step.cardTs === undefined) return await showCopies(step);
      const shown = { ...(copies && step.phase === 'pending' ? await copies(step) : step), cardTs: step.cardTs };
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
