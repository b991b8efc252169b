import { setTimeout as delay } from 'node:timers/promises';
import { closingToolMessage, COUNTERSIGN_ACTOR } from '../agent/decision-messages.js';
import type { ApprovalRequest } from '../agent/run-turn.js';
import type { AuditEventInput } from '../audit/audit-event.js';
import type { Decision, PendingStep } from '../approvals/pending-step.js';
import { describeApprovers } from '../approvals/policy/describe-approvers.js';
import { copiesLinkToCard } from '../approvals/card-routing.js';
import { keepFirstCardToFind } from '../approvals/card-refreshes.js';
import { postMissingCopies } from '../approvals/post-card-copies.js';
import { stepRecordTtlMs } from '../approvals/step-record-ttl.js';
import { closeStepTransition } from '../approvals/transitions/close-step.js';
import { commitTransition } from '../approvals/transitions/commit-transition.js';
import { logUnconfirmedWithdrawal } from '../approvals/unconfirmed-withdrawal.js';
import { unconfirmedCardPostOf } from '../errors/countersign-error.js';
import type { NamedWrite, RecordedCard } from '../store/state-store.js';
import { isStoreUnavailable } from '../store/store-unavailable.js';
import type { ThreadState } from '../store/thread-state.js';
import { buildPendingStep } from './build-pending-step.js';
import { shortError } from './short-error.js';
import type { PhaseDependencies } from './phase-dependencies.js';
import { refreshCard as refreshStepCard } from './refresh-card.js';
import type { TurnScope } from './turn-scope.js';
import { takeBackUnrecorded } from './unrecorded-post.js';
import { traceparentOf } from '../tracing/trace-context.js';

/**
 * How long a posted card's ts may wait for the store (a Redis restart, a failover): a click on it
 * meanwhile is decided all the same, but the card is refreshed only once its ts is recorded.
 */
const CARD_RECORD_WAIT_MS = 10_000;
/** Between tries while the store is unavailable. */
const STORE_RETRY_MS = 250;

/** Runs `operation` again while the store is unavailable, until `until` (epoch ms); anything else rethrows. */
async function whileStoreReturns<T>(operation: () => Promise<T>, { until }: { until: number }): Promise<T> {
  for (;;) {
    try {
      return await operation();
    } catch (error) {
      if (!isStoreUnavailable(error) || Date.now() + STORE_RETRY_MS > until) throw error;
      await delay(STORE_RETRY_MS);
    }
  }
}

type StepCardDependencies = Pick<PhaseDependencies, 'store' | 'logger' | 'now' | 'policy' | 'tools' | 'newStepId' | 'limits'>;

/** A step's life on its card: opened with its records, posted (or closed if it cannot be), refreshed after a change. */
export function createStepCards(options: StepCardDependencies) {
  const { store, logger, now } = options;
  // Looked up per call: the tool list is live (MCP servers connect late and reconnect).
  const definitionOf = (toolName: string) => options.tools.find((tool) => tool.name === toolName);

  /**
   * The step, the thread that points at it and the `approval-requested` records are one write,
   * made before the card exists, so a click that arrives immediately finds its step. `marks`: what
   * the step carries from the start (`hookDecidingUntil` when the approval hook will be asked);
   * `attempt` names the write (`NamedWrite`), for a caller that takes back a post it records.
   */
  async function openStep(
    scope: TurnScope,
    thread: ThreadState,
    requesterId: string,
    requests: ApprovalRequest[],
    { marks = {}, ...named }: { marks?: Pick<PendingStep, 'hookDecidingUntil'> } & NamedWrite = {},
  ): Promise<PendingStep> {
    const built = await buildPendingStep({
      thread,
      requesterId,
      requests,
      policy: options.policy,
      definitionOf,
      stepId: options.newStepId(thread.threadKey),
      now: now(),
    });
    const traceparent = traceparentOf(scope.traceContext);
    const step: PendingStep = { ...built, ...marks, ...(traceparent === undefined ? {} : { traceparent }) };
    thread.pendingStepId = step.stepId;
    thread.updatedAt = now();
    // The step and its thread are kept until its deadline at least, however short the history's TTL.
    const ttlMs = stepRecordTtlMs({ step, historyTtlMs: options.limits.historyTtlMs, now: now() });
    await scope.lease.guard(() => store.createStep({ step, thread, ttlMs, audit: approvalRequested(step), fence: scope.lease.fence, ...named }));
    return step;
  }

  /**
   * Posts a step's card; if Slack refuses it, the step is closed so nothing waits on a card no one
   * sees. One Slack may have posted is looked for later (`keepFirstCardToFind`).
   */
  async function postCardFor(scope: TurnScope, step: PendingStep): Promise<void> {
    const posted = await postThreadCard(scope, step);
    if (posted) await postCopies(scope, posted);
  }

  async function postThreadCard(scope: TurnScope, step: PendingStep): Promise<PendingStep | undefined> {
    let cardTs: string;
    try {
      cardTs = await scope.messenger.postStepCard({ step });
    } catch (error) {
      if (scope.lease.lost()) throw error;
      // Slack may have posted it (its reply was lost) and the thread could not be read to find it: the
      // request stays open (that card's clicks decide) and the sweep looks for the card, recording it
      // once found or posting it if Slack did not; closed here, a card Slack did post would stand with
      // live buttons whose clicks are refused. Copies go without a link to it.
      const unconfirmed = unconfirmedCardPostOf(error);
      if (unconfirmed !== undefined && (await keepFirstCardToFind({ store, step, post: unconfirmed, logger, at: now() }))) return step;
      await closeUnpostedStep(scope, step, error);
      return undefined;
    }
    // The card is in the thread from here on, and its buttons work (a click names its step): a
    // failure in the bookkeeping below must not close a step people can see and approve.
    // The copies link back to the thread's card, so its link is taken before they are posted.
    const cardLink = copiesLinkToCard(step)
      ? await scope.messenger.permalinkOf({ channel: step.channel, ts: cardTs }).catch((error: unknown) => {
          if (scope.lease.lost()) throw error;
          logger.warn({ event: 'card-link-failed', stepId: step.stepId, err: error }, 'could not read the card link; copies go without it');
          return undefined;
        })
      : undefined;
    logger.info({ event: 'approval-requested', stepId: step.stepId, calls: step.calls.map((call) => call.toolName) }, 'approval card posted');
    const posted = { ...step, cardTs, ...(cardLink === undefined ? {} : { cardLink }) };
    let recorded: RecordedCard | undefined;
    try {
      recorded = await whileStoreReturns(() => store.setStepCard(step.stepId, cardTs, cardLink), { until: Date.now() + (options.limits.cardRecordWaitMs ?? CARD_RECORD_WAIT_MS) });
    } catch (error) {
      // Unrecorded, the card is not refreshed when the step changes (its clicks still decide):
      // stale buttons on a step that stays decidable are better than a card closed behind its back.
      logger.error({ event: 'card-ts-unrecorded', stepId: step.stepId, cardTs, err: error }, 'the approval card was posted but its ts could not be recorded');
      return posted;
    }
    if (recorded === undefined) return posted;
    // Another process posted the step's card and recorded it first (one of the two stalled between
    // its post and its record, and the thread's new holder found no card): only the recorded card is
    // refreshed as the step changes, so this one would keep live buttons beside it. Taken back; the
    // recorded card is the step's from here on, for the copies too.
    const takeBack = takeBackUnrecorded(scope, { channel: step.channel, threadKey: step.threadKey, stepId: step.stepId, posted: [cardTs], recorded: [recorded.cardTs] });
    if (takeBack) {
      logger.warn({ event: 'card-taken-back', stepId: step.stepId, cardTs, recordedTs: recorded.cardTs }, 'another card of the step was recorded first; this one is removed');
      await takeBack();
    }
    // Decided before the card's ts was recorded: the decision found no card to update, so this does.
    const latest = takeBack || recorded.revision > step.revision ? await store.getStep(step.stepId) : undefined;
    if (latest && recorded.revision > step.revision) await refreshCard(scope, latest);
    return takeBack ? latest : posted;
  }

  /** A card Slack refused: its calls are closed by countersign, so nothing waits on a card no one sees. */
  async function closeUnpostedStep(scope: TurnScope, step: PendingStep, error: unknown): Promise<void> {
    // Every call was already decided (by the approval hook): the card only reports, and the turn goes on without it.
    if (step.phase !== 'pending') {
      logger.warn({ event: 'card-post-failed', stepId: step.stepId, err: error }, 'could not post the card of a decided step');
      return;
    }
    logger.error({ event: 'card-post-failed', stepId: step.stepId, err: error }, 'could not post approval card');
    const decision = cardNotPostedDecision({ error, at: now() });
    const closed = await scope.lease.guard(() =>
      commitTransition(store, step.stepId, (current) => {
        const transition = closeStepTransition(current, decision);
        return transition && { ...transition, fence: scope.lease.fence };
      }, { onUnconfirmed: logUnconfirmedWithdrawal(logger) }),
    );
    if (closed) {
      const thread = await store.getThread(step.threadKey);
      if (thread) {
        thread.messages.push(closingToolMessage(closed));
        delete thread.pendingStepId;
        await scope.save(thread, { settled: true });
      }
    }
    await scope.messenger.postNotice({
      channel: step.channel,
      threadTs: step.threadTs,
      text: `:warning: I could not post the approval card (${shortError(error)}), so nobody could decide on it and nothing was run. This was an error, not a denial: please ask again.`,
    });
  }

  /**
   * Copies of the card where the rule routes it (a channel, DMs to the named approvers), then every
   * card shown from the step as stored: the thread's card learns where its copies are, and a
   * decision made while they were being posted reaches them too.
   */
  async function postCopies(scope: TurnScope, step: PendingStep): Promise<void> {
    const posted = await postMissingCopies({ store, messenger: scope.messenger, takeBacks: scope, logger, step, stop: () => scope.lease.lost() });
    const latest = posted > 0 ? await store.getStep(step.stepId) : undefined;
    if (latest) await refreshCard(scope, latest);
  }

  /**
   * The card of the thread's open step, when a process opened the step and stopped before posting
   * it: nobody could decide on a card nobody sees, and the thread would wait in silence. True when
   * it was posted here.
   */
  async function postUnpostedCard(scope: TurnScope, thread: ThreadState): Promise<boolean> {
    if (thread.pendingStepId === undefined) return false;
    const step = await store.getStep(thread.pendingStepId);
    if (!step || step.cardTs !== undefined || step.phase !== 'pending') return false;
    await postCardFor(scope, step);
    return true;
  }

  const refreshCard = (scope: TurnScope, step: PendingStep) => refreshStepCard({ scope, step, logger, store, now });

  return { openStep, postCardFor, postUnpostedCard, refreshCard };
}

export type StepCards = ReturnType<typeof createStepCards>;

/**
 * How the calls of a card that could not be posted are closed: by countersign itself, with the
 * error as the reason, so neither the model nor the audit trail reads it as a person's denial.
 */
export function cardNotPostedDecision({ error, at }: { error: unknown; at: number }): Decision {
  return { outcome: 'denied', userId: COUNTERSIGN_ACTOR, at, reason: `the approval card could not be posted (${shortError(error)})` };
}

/** The `approval-requested` records of a new step, one per call, written with the step. */
function approvalRequested(step: PendingStep): AuditEventInput[] {
  return step.calls.map((call) => ({
    type: 'approval-requested',
    teamId: step.teamId,
    stepId: step.stepId,
    approvalId: call.approvalId,
    toolName: call.toolName,
    input: call.input,
    requesterId: step.requesterId,
    channel: step.channel,
    threadTs: step.threadTs,
    ...(call.policy ? { approvers: describeApprovers(call.policy) } : {}),
    ...(step.expiresAt === undefined ? {} : { expiresAt: step.expiresAt }),
  }));
}
