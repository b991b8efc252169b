import type { Logger } from 'pino';
import type { KeptRetrySchedule, KeptTry } from '../conversation/kept-retries.js';
import type { MessageTakeBacks } from '../conversation/message-take-back.js';
import { shortError } from '../conversation/short-error.js';
import type { ThreadMessenger } from '../conversation/thread-messenger.js';
import { slackMayTakeItLater, slackRetryAfterMs, type UnconfirmedCardPost, unconfirmedCardPostOf } from '../errors/countersign-error.js';
import type { PendingCardRefresh, StateStore, UnconfirmedRepost } from '../store/state-store.js';
import { copiesLinkToCard } from './card-routing.js';
import type { PendingStep } from './pending-step.js';
import { stepStateText } from './step-state-text.js';

/**
 * How a card refresh ended (`createCardRefreshes`).
 * `told`: the card could not be posted again (or the request is closed): only the thread was told.
 * `unconfirmed`: whether Slack posted the card again is not known: a refresh of its own looks for it.
 * `notice-owed`: a card posted again was recorded, the thread not told: a refresh of its own tells it.
 */
export type CardRefreshOutcome = 'shown' | 'posted-again' | 'told' | 'gone' | 'unconfirmed' | 'notice-owed';
export type CardRefreshTry = KeptTry<CardRefreshOutcome>;
type Tried = CardRefreshTry;
type NotDone = Extract<Tried, { done: false }>;
/** A card posted again and recorded. */
type Reposted = { ts: string };

/** The part of a card refresh that posts a card: again in place of one Slack would not update, or a step's first. */
export interface CardReposts {
  postAgain(refresh: PendingCardRefresh, step: PendingStep & { cardTs: string }, error: unknown): Promise<Tried>;
  settleUnconfirmed(stepId: string, unconfirmed: UnconfirmedRepost): Promise<Tried | 'absent'>;
  postFirstCard(refresh: PendingCardRefresh, step: PendingStep): Promise<Tried>;
  tellOwed(step: PendingStep | undefined, recorded: string): Promise<Tried>;
}

type RepostDependencies = {
  store: Pick<StateStore, 'getStep' | 'setStepCard' | 'replaceStepCard' | 'scheduleCardRefresh'>;
  messenger: Pick<ThreadMessenger, 'postStepCard' | 'findPostedCard' | 'permalinkOf' | 'postNotice'>;
  /** For a card posted that could not be recorded: it would keep live buttons nobody updates. */
  takeBacks: Pick<MessageTakeBacks, 'takeBack'>;
  logger: Logger;
  now: () => number;
  schedule: KeptRetrySchedule;
  /** Shows the step, and again while it changed meanwhile (the card refreshes' own). */
  showLatest: (step: PendingStep) => Promise<void>;
  /** Keeps the step's card for the sweep to draw again, due at once (`keepCardToRedraw`). Never throws. */
  redrawLater: (stepId: string) => Promise<void>;
};

/** A step's first card whose post's outcome is not known: no card it replaces. */
export function firstCardPost(step: PendingStep, post: UnconfirmedCardPost): UnconfirmedRepost {
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

/**
 * Posts a card for a refresh (`createCardRefreshes`'s tries): again, in place of a card Slack
 * refuses to update, or a step's first card that Slack did not post after all; records it (taken
 * back when it cannot be), looks for one whose post lost its reply, and tells the thread. What
 * cannot be done now is kept in a refresh of its own (`keepFollowUp`).
 */
export function createCardReposts({ store, messenger, takeBacks, logger, now, schedule, showLatest, redrawLater }: RepostDependencies): CardReposts {
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
      await redrawLater(posted.stepId);
    }
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
   * that message already. A card left as it was is always looked for so, below that card: its notice
   * failing (a 502 after Slack posted it) leaves the refresh not done, and the next try, or another
   * sweep's, would tell the thread again. A card posted again is told without the refusal (the log has it, `error`):
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
    const after = unlessPostedAfter ?? (posted === undefined ? step.cardTs : undefined);
    await messenger.postNotice({ channel: step.channel, threadTs: step.threadTs, text, ...(after === undefined ? {} : { unlessPostedAfter: after }) });
    logger.warn({ event: posted === undefined ? 'card-not-updated' : 'card-posted-again', stepId: step.stepId, cardTs: posted?.ts, err: error }, 'Slack refused to update an approval card; the thread was told');
    return posted === undefined ? 'told' : 'posted-again';
  };

  return { postAgain, settleUnconfirmed, postFirstCard, tellOwed };
}
