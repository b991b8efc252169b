import type { Logger } from 'pino';
import { createMessageTakeBacks, type MessageTakeBacks } from '../conversation/message-take-back.js';
import type { ThreadMessenger } from '../conversation/thread-messenger.js';
import type { TakenClaim, ThreadWorker } from '../conversation/thread-worker.js';
import { encodeWorkItem } from '../conversation/work-item.js';
import { slackMayTakeItLater } from '../errors/countersign-error.js';
import { FencedError } from '../store/fenced-error.js';
import { isNewerSchemaError } from '../store/newer-schema-error.js';
import type { ScheduleKind, StateStore } from '../store/state-store.js';
import { approvalsOf, currentVersion } from './input-version.js';
import { decisionOf, isQuestion, undecidedCalls, type PendingCall, type PendingStep } from './pending-step.js';
import { withMissingCopies } from './post-card-copies.js';
import { type NoticePlace, noticePlaces } from './card-notice-places.js';
import { showLatestStep } from './show-latest-step.js';
import { keepCardToRedraw } from './card-refreshes.js';
import { approverMentions } from './policy/describe-approvers.js';
import type { GroupMembers } from './policy/approver-eligibility.js';
import { governedReminderMentions, reminderGroupIds } from './policy/governed-reminder-mentions.js';
import { callsOnStepLadder } from './policy/escalation-scope.js';
import { governingExpiry } from './policy/approval-deadlines.js';
import { governingPolicy, type CurrentEvaluation } from './policy/governing-policy.js';
import { approversLetDecide } from './policy/approvers-let-decide.js';
import { escalateTransition } from './transitions/escalate.js';
import { ruleLabel } from './policy/rule-label.js';
import { type Metrics, noMetrics } from '../metrics/metrics.js';
import { approverKey, type EscalationStage } from '../config/policy-config-schema.js';
import { expireTransition } from './transitions/close-step.js';
import { commitTransition, StepContendedError } from './transitions/commit-transition.js';

export { EXPIRY_USER } from './transitions/close-step.js';

/** Due work handled per sweep; the rest waits for the next one, so one sweep stays short. */
const BATCH = 20;
/** An expiry races only the step's last clicks: conflicts resolve within a few rounds. */
const MAX_COMMIT_ATTEMPTS = 25;
/**
 * How far a sweep puts off the due expiry, reminder or hop of a step a newer release wrote (a rolling
 * deploy, a rollback), which this one cannot read: far enough that its sweeps do not read it again
 * and again ahead of the steps they can handle, near enough that the newer release's sweeps still
 * handle it on time (or nearly: they find it first, unless this one swept just before).
 */
export const NEWER_RELEASE_RETRY_MS = 30_000;
/**
 * The pause before a reminder Slack did not take everywhere is tried again: as long as it has been due
 * (so each wait about doubles), within these.
 */
const REMINDER_RETRY_MIN_MS = 2 * 60_000;
const REMINDER_RETRY_MAX_MS = 15 * 60_000;
/**
 * How long a reminder's claim keeps every other process off it, by the store's clock: from the claim,
 * then from each renewal, which its sender makes before each post (`keepReminder`; one that finds it
 * lost stops). A post already on its way when the lease runs out can still be sent a second time by
 * the process that takes the reminder over, so the lease is well beyond one post's worst case with the
 * Slack client's settings (`create-slack-app.ts`: a 15 s timeout, 2 retries): a retry's read of the
 * place first (up to 5 pages of replies, each up to 3 tries of 15 s: under 4 minutes), then the post
 * (15 s, which the client does not repeat, and a Retry-After for each of up to 2 rate limits). A
 * sender that died holds its reminder back this long at most.
 */
const REMINDER_LEASE_MS = 10 * 60_000;

/**
 * The calls a hop reaches, by tool. A call that shares its tool with a waiting call the hop does not
 * reach (another rule's) is named by its place on the card too, so nobody reads the hop as theirs.
 */
function reachedCallsText(step: PendingStep): string {
  const reached = callsOnStepLadder(step);
  const reachedIds = new Set(reached.map((call) => call.approvalId));
  const othersTools = new Set(undecidedCalls(step).flatMap((call) => (isQuestion(call) || reachedIds.has(call.approvalId) ? [] : [call.toolName])));
  const names = reached.map((call) => {
    const tool = `\`${call.toolName}\``;
    if (!othersTools.has(call.toolName)) return tool;
    const place = step.calls.findIndex((candidate) => candidate.approvalId === call.approvalId) + 1;
    return `${tool} (call ${place} of ${step.calls.length} on the card)`;
  });
  return [...new Set(names)].join(', ');
}

/** The approvals still waiting for a decision (not a person's questions). */
function waitingApprovals(step: PendingStep): PendingCall[] {
  return undecidedCalls(step).filter((call) => !isQuestion(call) && currentVersion(call));
}

export interface ExpirySweeperOptions {
  store: StateStore;
  messenger: ThreadMessenger;
  worker: ThreadWorker;
  logger: Logger;
  now: () => number;
  intervalMs?: number;
  /**
   * Further upkeep run on the same schedule (recovery of work a dead process left). `stopping` is
   * aborted when the sweeper is stopped, so a sweep under way takes no new work on the way out.
   */
  alsoRun?: (sweep: { stopping: AbortSignal }) => Promise<void>;
  /** Escalation hops and expiries counted for the operator's dashboards. */
  metrics?: Metrics;
  /**
   * The config in force's evaluation of a waiting call's input: a hop announces only the fallback
   * approvers it would let decide (see `governingPolicy`), and a step expires by the earlier of its
   * deadline and the one that config sets (`governingExpiry`). Absent: the step's ladder and deadline alone.
   */
  currentEvaluation?: CurrentEvaluation;
  /**
   * Members of the user groups the card's policy and the config in force name, when they differ: a
   * reminder then mentions by name the members both let approve (`governedReminderMentions`).
   * Absent, or failing: such groups give nobody.
   */
  resolveGroups?: (groupIds: readonly string[]) => Promise<GroupMembers>;
  /** Removes a copy of a card whose record failed (`postMissingCopies`); default: take-backs over this store and messenger. */
  takeBacks?: Pick<MessageTakeBacks, 'takeBack'>;
}

/**
 * Expiry and reminders, driven by schedules in the store rather than in-process timers, so they
 * happen across restarts and with several bot processes: every process sweeps, and the store lets
 * exactly one of them expire a step (or send a reminder).
 */
export function createExpirySweeper(options: ExpirySweeperOptions) {
  const { store, messenger, worker, logger, now } = options;
  const metrics = options.metrics ?? noMetrics;
  const takeBacks = options.takeBacks ?? createMessageTakeBacks({ store, messenger, logger, now });
  let timer: NodeJS.Timeout | undefined;
  let sweeping: Promise<void> | undefined;
  let stopping = new AbortController();

  /**
   * Pings the approvers of `calls` (by default every approval still waiting: the step's own
   * reminder), naming them by tool (`names`, by default). The approvers are those a click would
   * accept now: under the governing policy, the card's and the config in force's together. Pinged
   * where they decide: in the thread, under each channel copy of those calls and in the DM copy of
   * each one pinged (`noticePlaces`).
   */
  async function remind(
    step: PendingStep,
    {
      prefix = ':bell: ',
      calls: waiting = waitingApprovals(step),
      names,
      tried = false,
      stillHeld,
    }: { prefix?: string; calls?: PendingCall[]; names?: string; tried?: boolean; stillHeld?: () => Promise<boolean> } = {},
  ): Promise<number> {
    if (waiting.length === 0 || step.phase !== 'pending') return 0;
    const mentionsOf = new Map(await Promise.all(waiting.map(async (call) => [call.approvalId, await mentionsFor(step, call)] as const)));
    const mentions = new Set([...mentionsOf.values()].flat());
    const named = names ?? [...new Set(waiting.map((call) => `\`${call.toolName}\``))].join(', ');
    const expires = step.expiresAt === undefined ? '' : ` It expires <!date^${Math.floor(step.expiresAt / 1000)}^{date_short_pretty} at {time}|soon>.`;
    const text = `${prefix}${[...mentions].join(' ')}${mentions.size > 0 ? ' ' : ''}Approval still needed for ${named}.${expires}`;
    const places = noticePlaces(step, { calls: waiting, inDm: (userId, call) => mentionsOf.get(call.approvalId)?.includes(`<@${userId}>`) ?? false });
    return postNotice(step, { places, text, event: 'reminder-failed', tried, ...(stillHeld ? { stillHeld } : {}) });
  }

  /**
   * Posts `text` in each of `places`; one Slack refuses is logged (as `event`) and the others still get
   * it. `tried`: an earlier try may have posted it in some of them (Slack took it there, or took it but
   * its reply was lost), so each is read first and gets it only if it has not. Returns how many places
   * Slack failed in a way a later try may get past (`slackMayTakeItLater`). `stillHeld`: asked before
   * each post; once it says no, nothing more is posted (another process has taken the notice over).
   */
  async function postNotice(
    step: PendingStep,
    { places, text, event, tried = false, stillHeld }: { places: NoticePlace[]; text: string; event: string; tried?: boolean; stillHeld?: () => Promise<boolean> },
  ): Promise<number> {
    let tryLater = 0;
    for (const { channel, threadTs, stepMessageTs } of places) {
      if (stillHeld && !(await stillHeld())) break;
      await messenger.postMention({ channel, threadTs, text, ...(tried ? { unlessPostedAfter: stepMessageTs } : {}) }).catch((error: unknown) => {
        if (slackMayTakeItLater(error)) tryLater += 1;
        logger.warn({ event, stepId: step.stepId, channel, err: error }, 'could not post a notice about an approval request');
      });
    }
    return tryLater;
  }

  /** Who a reminder about `call` pings: those the governing policy of its current version lets approve now. */
  async function mentionsFor(step: PendingStep, call: PendingCall): Promise<string[]> {
    const version = currentVersion(call)!;
    const approvedBy = approvalsOf(step, call, version.number).map((approval) => approval.userId);
    const current = options.currentEvaluation ? await options.currentEvaluation({ step, call, input: version.input }) : undefined;
    const governing = governingPolicy({ step, stored: version.policy, current });
    const groupIds = reminderGroupIds(governing);
    const groupMembers = groupIds.length === 0 ? new Map<string, ReadonlySet<string>>() : await membersOf(step, groupIds);
    return governedReminderMentions({ governing, requesterId: step.requesterId, ...(step.instigatorIds ? { instigatorIds: step.instigatorIds } : {}), approvedBy, groupMembers });
  }

  async function membersOf(step: PendingStep, groupIds: readonly string[]): Promise<GroupMembers> {
    if (!options.resolveGroups) return new Map();
    return options.resolveGroups(groupIds).catch((error: unknown) => {
      logger.warn({ event: 'reminder-groups-unresolved', stepId: step.stepId, groupIds, err: error }, 'could not resolve user groups for a reminder; their members are not mentioned');
      return new Map();
    });
  }

  /**
   * Writes the expiry and queues the step's resume in one atomic write, as a completing click does,
   * so the resume can never be lost between them; on a conflict it starts again from the step as it
   * is now. The thread's lock comes with it when it was free (then this process drains the thread).
   */
  async function commitExpiry(stepId: string, due: number | undefined): Promise<{ step: PendingStep; claim?: TakenClaim } | undefined> {
    for (let attempt = 0; attempt < MAX_COMMIT_ATTEMPTS; attempt += 1) {
      const current = await store.getStep(stepId);
      const at = Math.max(now(), due ?? -Infinity);
      const transition = current && expireTransition(current, { now: at, expiresAt: await governingStepExpiry(current, at) });
      if (!transition) return undefined;
      const { step } = transition;
      const item = encodeWorkItem({ kind: 'resume', stepId, channel: step.channel, threadTs: step.threadTs, ...(step.traceparent ? { traceparent: step.traceparent } : {}) });
      // Before the write that may take the thread's lock: the lock is ours from then at most.
      const askedAt = Date.now();
      const { result, claim } = await store.commitStepAndQueue(transition, { item, ...worker.queueing });
      // Counted by the worker from now (`claimTaken`): the card is drawn before the drain begins.
      if (result === 'committed') return { step, ...(claim ? { claim: worker.claimTaken(step.threadKey, { ...claim, askedAt }) } : {}) };
      if (result === 'not-found') return undefined;
      if (result === 'fenced') throw new FencedError(step.threadKey);
    }
    throw new StepContendedError({ stepId, attempts: MAX_COMMIT_ATTEMPTS });
  }

  /**
   * The step's deadline under the config in force too: the earliest of its calls still waiting
   * (`governingExpiry`), so a click refused as past an expiry a deploy shortened (`expireNow`)
   * closes the step as its stored deadline would have. Without `currentEvaluation`, or once the
   * stored one has passed (the sweep's due steps: no tool's approval rule is run for them), the
   * stored one.
   */
  async function governingStepExpiry(step: PendingStep, at: number): Promise<number | undefined> {
    const { currentEvaluation } = options;
    if (!currentEvaluation || step.phase !== 'pending' || step.expiresAt === undefined || at >= step.expiresAt) return step.expiresAt;
    let expiresAt = step.expiresAt;
    for (const call of undecidedCalls(step)) {
      const version = isQuestion(call) ? undefined : currentVersion(call);
      if (!version) continue;
      expiresAt = Math.min(expiresAt, governingExpiry({ step, current: await currentEvaluation({ step, call, input: version.input }) }) ?? expiresAt);
    }
    return expiresAt;
  }

  /**
   * Sends a step's due reminder once: the process that claims it sends it, holding the claim
   * (`REMINDER_LEASE_MS`) while it posts, and takes it off the schedule once it is posted everywhere
   * Slack will take it. Where Slack failed (a 500, the network, a rate limit) it lets go of the claim: a
   * later sweep, of any process, tries again (posting only where it is not there yet), after a pause as
   * long as it has been due (`REMINDER_RETRY_*`), until the request closes. So does one whose sender
   * stopped before it finished, once the lease runs out; a sender that finds its lease ran out (it took
   * longer than that) stops posting and leaves the rest to the process that took it over.
   */
  async function remindDue(stepId: string): Promise<void> {
    // Read before the claim: a step this release cannot read keeps its reminder (`leaveToNewerRelease`).
    const step = await store.getStep(stepId);
    // Now, not the sweep's start: a reminder late in a slow batch is tried again a pause after its claim.
    const at = now();
    const dueSince = step?.remindAt ?? at;
    const pause = Math.min(Math.max(at - dueSince, REMINDER_RETRY_MIN_MS), REMINDER_RETRY_MAX_MS);
    const claim = await store.claimReminder({ stepId, now: at, until: at + pause, leaseMs: REMINDER_LEASE_MS });
    if (!claim) return;
    let held = true;
    // Whether the claim was let go of here: finished, released, or found lost.
    let settled = false;
    const stillHeld = async () => {
      held = await store.keepReminder(stepId, claim, REMINDER_LEASE_MS);
      return held;
    };
    try {
      // Due later than the step says: an earlier try left it (or a newer release put it off).
      const left = step ? await remindBeforeExpiry(step, at, { tried: claim.dueAt > dueSince, stillHeld }) : 0;
      if (!held) {
        settled = true;
        logger.warn({ event: 'reminder-claim-lost', stepId }, 'a reminder took longer to send than its claim lasts; the process that took it over posts the rest');
        return;
      }
      if (left > 0) {
        logger.info({ event: 'reminder-tried-later', stepId, places: left, at: claim.until }, 'Slack did not take a reminder everywhere; a later sweep tries those places again');
        await store.releaseReminder(stepId, claim);
        settled = true;
        return;
      }
      await store.finishReminder(stepId, claim);
      settled = true;
    } finally {
      // Something threw (a Redis blip renewing the lease, say): a live sender lets go of the claim, so the
      // reminder comes due again at `until` rather than when the lease runs out, perhaps past the expiry.
      if (!settled) {
        await store.releaseReminder(stepId, claim).catch((error: unknown) => {
          logger.warn({ event: 'reminder-release-failed', stepId, err: error }, 'could not let go of a reminder claim; it is tried again once its lease runs out');
        });
      }
    }
  }

  /**
   * The reminder, unless the request is past its deadline (under the config in force too): a sweep
   * after every process was down across the reminder and the expiry finds both due, and would ping
   * the approvers "Approval still needed … It expires <a time already past>" for a request it then
   * closes as expired. Returns how many places Slack may take it later.
   */
  async function remindBeforeExpiry(step: PendingStep, at: number, options: { tried: boolean; stillHeld: () => Promise<boolean> }): Promise<number> {
    const expiresAt = await governingStepExpiry(step, at);
    if (expiresAt !== undefined && at >= expiresAt) return 0;
    return remind(step, options);
  }

  /**
   * Closes the step if its expiry has passed; exactly one process (or click) wins it. `due`: a time
   * the deadline is known to have passed by (a click's write Redis refused as 'expired', by its
   * clock): the step closes as of then, however far behind this process's own clock runs.
   */
  async function expire(stepId: string, { due }: { due?: number } = {}): Promise<void> {
    const stored = await store.getStep(stepId);
    // Kept past its deadline (`stepRecordTtlMs`), a step is gone only after an outage longer than the grace: its card cannot be closed.
    if (stored === undefined) logger.warn({ event: 'expiring-step-gone', stepId }, 'a request due to expire has no record left; its card keeps its buttons');
    // Gone (its key expired) or closed some other way: nothing left to expire, ever.
    if (stored?.phase !== 'pending') return store.unschedule(stepId);
    const expired = await commitExpiry(stepId, due);
    if (!expired) return;
    const { step, claim } = expired;
    for (const call of step.calls) {
      if (decisionOf(step, call.approvalId)?.outcome === 'expired') metrics.approvalExpired({ rule: ruleLabel(currentVersion(call)?.policy ?? call.policy) });
    }
    // Read again after drawing (`showLatestStep`): a copy recorded while the expiry was written is not on `step`.
    await showLatestStep({ store, messenger, step, logger }).catch(async (error: unknown) => {
      logger.warn({ event: 'card-update-failed', stepId, err: error }, 'could not mark the card expired');
      // Drawn again by a later sweep: left as it is, the card would keep its buttons.
      await keepCardToRedraw({ store, stepId, logger, at: now() });
    });
    logger.info({ event: 'approval-expired', stepId }, 'approval request expired');
    // Queued with the expiry. Not awaited: the drain runs the resumed turn (minutes), and the sweep
    // must go on to the other due steps.
    if (claim) {
      void worker.drainClaimed(step.threadKey, claim).catch((error: unknown) => logger.warn({ event: 'expiry-resume-failed', stepId, err: error }, 'could not resume an expired step'));
    }
  }

  /**
   * Makes every hop of the step's ladder whose time has come (a sweep that was down may owe
   * several), each committed over the revision it was computed from, so across processes each hop
   * happens once and only its maker announces it; then puts the next hop on the schedule.
   */
  async function escalate(stepId: string): Promise<void> {
    for (;;) {
      let stage: EscalationStage | undefined;
      const step = await commitTransition(store, stepId, (current) => {
        const result = escalateTransition(current, { now: now() });
        stage = result?.stage;
        return result?.transition;
      });
      // No stage: the ladder stopped, none of its calls waiting (nothing to announce).
      if (!step || !stage) break;
      metrics.escalated({ stage: (step.escalation?.done ?? 0) + 1 });
      logger.info({ event: 'approval-escalated', stepId, hop: step.escalation?.done }, 'approval request escalated');
      await announceHop(step, stage).catch((error: unknown) => logger.warn({ event: 'escalation-notice-failed', stepId, err: error }, 'could not announce an escalation'));
      // Fallback approvers named by user id get their DM copy when the rule sends DMs, if the config in force lets them decide.
      const shown = await withMissingCopies({ store, messenger, takeBacks, logger, step, currentEvaluation: options.currentEvaluation, failure: 'could not post copies for added approvers' });
      // Read again after drawing (`showLatestStep`): a click that decided the request while the hop was
      // announced drew its decision once (a decided step is final); this older draw landing after it
      // would leave "waiting" and live buttons on a request already decided.
      await showLatestStep({ store, messenger, step: shown, logger }).catch(async (error: unknown) => {
        logger.warn({ event: 'card-update-failed', stepId, err: error }, 'could not show an escalation on the card');
        await keepCardToRedraw({ store, stepId, logger, at: now() });
      });
    }
    // Read after the hops: whoever reads last sets what is left (a stale entry only costs a no-op sweep).
    const nextAt = hopAtOf(await store.getStep(stepId));
    await store.scheduleEscalation(stepId, nextAt);
    if (nextAt !== undefined) return;
    // A missing entry would cost the ladder: an edit that put a call back under a stopped ladder's
    // rule wrote its next hop with the step, and one that landed after the read above was just
    // taken off. Read again: any later edit's own write comes after this removal.
    const resumedAt = hopAtOf(await store.getStep(stepId));
    if (resumedAt !== undefined) await store.scheduleEscalation(stepId, resumedAt);
  }

  function hopAtOf(step: PendingStep | undefined): number | undefined {
    return step?.phase === 'pending' ? step.escalation?.nextAt : undefined;
  }

  /**
   * A step a newer release wrote is not gone: its schedule is left to a process that reads it, put
   * off a little so this one's sweeps move on to the steps it can handle. Any other error is thrown.
   */
  async function leaveToNewerRelease(kind: ScheduleKind, stepId: string, error: unknown): Promise<void> {
    if (!isNewerSchemaError(error)) throw error;
    logger.info({ event: 'step-left-to-newer-release', kind, stepId, schemaVersion: error.found }, 'a newer countersign release wrote this step; left for a process that can read it');
    await store.postponeDue({ kind, stepId, until: now() + NEWER_RELEASE_RETRY_MS });
  }

  /** Tells the people of a hop: a reminder, and/or the fallback approvers that they may now decide (in the thread and under each channel copy of the calls it reached). */
  async function announceHop(step: PendingStep, stage: EscalationStage): Promise<void> {
    const hop = step.escalation?.done ?? 0;
    const stageText = `stage ${hop + 1} of ${(step.escalation?.ladder.length ?? 0) + 1}`;
    // The hop is the ladder's rule's answer to a slow request: it reminds only the approvers of the calls under that rule.
    const waiting = reachedCallsText(step);
    if (stage.remind) await remind(step, { prefix: `:bell: Reminder (${stageText}): `, calls: callsOnStepLadder(step), names: waiting });
    const added = await hopApproversLetDecide(step, stage.addApprovers);
    if (added.length === 0 || waiting === '') return;
    const expires = step.expiresAt === undefined ? '' : ` It expires <!date^${Math.floor(step.expiresAt / 1000)}^{date_short_pretty} at {time}|soon>.`;
    const text = `:rotating_light: Escalated (${stageText}): ${approverMentions(added)} can now approve ${waiting}.${expires}`;
    // The added approvers get their DM copies after this, so the DMs there are not theirs to tell.
    await postNotice(step, { places: noticePlaces(step, { calls: callsOnStepLadder(step) }), text, event: 'escalation-notice-failed' });
  }

  /**
   * The hop's approvers a click would accept on some call it reached: after a deploy that changed
   * the ladder's rule, the config in force also governs, and "<@U0LEAD> can now approve" must not
   * send someone to a card that refuses them; nor, for an input that may fall under several rules,
   * where the other rules' approvers do not name them too (`alsoApprovers`).
   */
  async function hopApproversLetDecide(step: PendingStep, added: EscalationStage['addApprovers']): Promise<EscalationStage['addApprovers']> {
    const announced = await approversLetDecide({ step, calls: callsOnStepLadder(step), approvers: added, currentEvaluation: options.currentEvaluation });
    if (announced.length < added.length) {
      const left = added.filter((approver) => !announced.includes(approver)).map(approverKey);
      logger.info({ event: 'escalation-approvers-unannounced', stepId: step.stepId, approvers: left }, 'these fallback approvers may not decide the calls the hop reached (the config in force, or the other rules an unclear input falls under)');
    }
    return announced;
  }

  async function sweepOnce(): Promise<void> {
    const at = now();
    for (const stepId of await store.dueSteps({ kind: 'reminder', now: at, limit: BATCH })) {
      await remindDue(stepId)
        .catch((error: unknown) => leaveToNewerRelease('reminder', stepId, error))
        .catch((error: unknown) => logger.warn({ event: 'reminder-failed', stepId, err: error }, 'could not send reminder'));
    }
    for (const stepId of await store.dueSteps({ kind: 'expiry', now: at, limit: BATCH })) {
      // An expiry queues the step's resume, a new turn, which this process would start (its drain
      // takes the thread's lock with it): on the way out, left to a live replica's sweep.
      if (stopping.signal.aborted) break;
      await expire(stepId).catch((error: unknown) => leaveToNewerRelease('expiry', stepId, error));
    }
    for (const stepId of await store.dueSteps({ kind: 'escalation', now: at, limit: BATCH })) {
      await escalate(stepId)
        .catch((error: unknown) => leaveToNewerRelease('escalation', stepId, error))
        .catch((error: unknown) => logger.warn({ event: 'escalation-failed', stepId, err: error }, 'could not escalate'));
    }
    await options.alsoRun?.({ stopping: stopping.signal });
  }

  return {
    sweepOnce,
    expireNow: expire,
    start() {
      if (stopping.signal.aborted) stopping = new AbortController();
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
      stopping.abort();
      clearInterval(timer);
      await sweeping;
    },
  };
}
