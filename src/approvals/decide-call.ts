import { type Metrics, noMetrics } from '../metrics/metrics.js';
import { randomUUID } from 'node:crypto';
import { trace, type Context, type Span, type Tracer } from '@opentelemetry/api';
import { contextFromTraceparent, countersignTracer, traceparentOf } from '../tracing/trace-context.js';
import type { Logger } from 'pino';
import { appendQuietly, type AuditLog } from '../audit/audit-log.js';
import type { TakenClaim, ThreadWorker } from '../conversation/thread-worker.js';
import { createMessageTakeBacks, type MessageTakeBacks } from '../conversation/message-take-back.js';
import type { ThreadMessenger } from '../conversation/thread-messenger.js';
import { isNewerSchemaError } from '../store/newer-schema-error.js';
import { writeDidNotRun } from '../store/write-not-run.js';
import type { ReplicaShortfall, StateStore } from '../store/state-store.js';
import { encodeWorkItem } from '../conversation/work-item.js';
import { faultPoint } from '../runtime/fault-points.js';
import { createStoreWait } from './store-wait.js';
import { currentVersion } from './input-version.js';
import { withMissingCopies } from './post-card-copies.js';
import { awaitsCopies } from './card-routing.js';
import { showLatestStep } from './show-latest-step.js';
import { showStep } from './show-step.js';
import { stepChangedAt } from './step-changed-at.js';
import type { CardRefreshes } from './card-refreshes.js';
import { isQuestion, type PendingCall, type PendingStep } from './pending-step.js';
import { approverGroupIds, type GroupMembers } from './policy/approver-eligibility.js';
import { whoCanApprove } from './policy/describe-approvers.js';
import type { PolicyEvaluation } from './policy/evaluate-policy.js';
import { applyCallAction, pastDeadlineRefusal, type CallAction, type CallActionEffect, type CallActionRequest } from './transitions/call-action.js';
import { unconfirmedWithdrawalText } from './unconfirmed-withdrawal.js';
import { unsettledDecisionText } from './unsettled-decision.js';

export { alreadyDecidedText } from './transitions/call-action.js';

export interface DecideCallOptions {
  store: StateStore;
  messenger: ThreadMessenger;
  worker: ThreadWorker;
  logger: Logger;
  audit: AuditLog;
  /** Members of the user groups a policy names (cached `usergroups.users.list`). */
  resolveGroups: (groupIds: readonly string[]) => Promise<GroupMembers>;
  /**
   * The config in force's answer for an input: for an edited one (the new version is approved under
   * it) and for the version waiting (it governs with the policy the card showed).
   */
  evaluateInput: (options: { step: PendingStep; call: PendingCall; input: unknown }) => Promise<PolicyEvaluation>;
  /**
   * Closes a step whose expiry a click found passed, at once rather than at the next sweep. `due`:
   * the deadline Redis's clock said had passed when this replica's own did not yet (see `expire`).
   */
  expireNow?: (stepId: string, options?: { due?: number }) => Promise<void>;
  now?: () => number;
  newGrantId?: () => string;
  /** Decisions and refusals counted for the operator's dashboards. */
  metrics?: Metrics;
  /** Where decision spans go; default the global tracer provider's. */
  tracer?: Tracer;
  /** Draws a card again whose update Slack failed; without it, such a failure is only logged. */
  cardRefreshes?: Pick<CardRefreshes, 'redraw'>;
  /** Removes a copy of a card whose record failed (`postMissingCopies`); default: take-backs over this store and messenger. */
  takeBacks?: Pick<MessageTakeBacks, 'takeBack'>;
}

/** What a person did, before the server judged it; an edit carries the input, not its policy. */
export type CallDecisionRequest = Omit<CallActionRequest, 'action'> & {
  action: Exclude<CallAction, { kind: 'edit' }> | Omit<Extract<CallAction, { kind: 'edit' }>, 'policy'>;
};

export type RecordOutcome =
  /** `claim`: the step's resume was queued with the decision and this process took the thread's lock to run it (`publish`). */
  | { recorded: true; step: PendingStep; completedStep: boolean; effect: CallActionEffect; notice?: string; claim?: TakenClaim }
  /**
   * Nothing changed; `message` tells the person why, in their words. `closing`: the expiry a refusal
   * as expired set off (the step closed as the sweep would, and every copy of its card updated; a
   * failure is logged), already under way: `publish` awaits it, after Slack has its answer.
   * `unsettled`: not known to be nothing: the write may have landed (its reply lost, Redis unreachable
   * past the wait), and `message` says so; `publish` draws the card again, from the step as Redis then
   * has it, so it shows the outcome. `outdated`: the step as read, for a click its card should not
   * have offered (`OUTDATED_CARD_REFUSALS`), unless its newest change is too recent for its own draw
   * to have landed (`OUTDATED_CARD_DRAWN_AFTER_MS`); `publish` draws it.
   */
  | { recorded: false; message: string; closing?: Promise<void>; unsettled?: { stepId: string; error: unknown }; outdated?: PendingStep };

const NOT_OPEN = 'This approval request is no longer open, so nothing changed.';
/**
 * Refusals of a click on a button the card should no longer show: a call already decided, a step
 * already closed, an input edited since; or of an Approve by someone whose approval is counted
 * already (a quorum rule: the card may still say "0 of 2", and while the step waits for the others
 * no resume follows to draw it). The card (or copy) clicked shows an older state than the step:
 * usually its update is on its way, but its drawer may have stopped right after writing (the
 * after-decision crash: the resume another process ran draws nothing it did not change), leaving
 * live buttons for good. The click draws the step as stored, so the card heals at the first click
 * on it (Approve, Deny, or a button that opens a form: `showIfOutdated`) and the person sees what
 * became of the request; a click the card rightly offered costs nothing.
 */
const OUTDATED_CARD_REFUSALS: ReadonlySet<string> = new Set(['already-decided', 'closed', 'stale', 'already-approved']);
/**
 * How long after the step's newest change (`stepChangedAt`) a click refused as outdated leaves the card
 * to that change's own drawer. Such a click is most often a double-click, or two approvers clicking
 * together, while the first click's draw is on its way: drawing again would repeat it, a chat.update
 * per copy, against Slack's per-channel rate limits. A drawer that stopped leaves the card to the
 * first click after this.
 */
export const OUTDATED_CARD_DRAWN_AFTER_MS = 5_000;
/** A request stored by a newer release (a rolling deploy, a rollback) is open for all this process knows. */
export const NEWER_RELEASE_CLICK_TEXT = ":hourglass_flowing_sand: This request was made by a newer version of countersign that this process can't read, so nothing changed. Please try again in a minute.";
/** Concurrent clicks on one step each retry on a conflict; a step has few calls, so few rounds. */
const MAX_ATTEMPTS = 25;
/**
 * How long a click's decision keeps trying while Redis is unavailable. A click is acked before it is
 * recorded, so it can wait out a restart or a reconnect (seconds); a form's submit cannot: its
 * answer, with any field error, is due within Slack's 3 s.
 */
export const CLICK_STORE_WAIT_MS = 5_000;

/**
 * Records human actions on calls and shows them. Each action is judged by `applyCallAction`
 * against the step as stored and written only over the revision it was judged on, so concurrent
 * clicks on any number of processes are serialized and none is judged on stale state. Only the
 * decision that completes the step queues the resume, so an approved call runs once.
 */
export function createCallDecider(options: DecideCallOptions) {
  const metrics = options.metrics ?? noMetrics;
  const tracer = options.tracer ?? countersignTracer();
  const { store, messenger, worker, logger, audit } = options;
  const now = options.now ?? Date.now;
  const takeBacks = options.takeBacks ?? createMessageTakeBacks({ store, messenger, logger, now });
  const newGrantId = options.newGrantId ?? (() => randomUUID().replaceAll('-', '').slice(0, 16));
  const { whileStoreReturns, unavailableAsRetry } = createStoreWait({ logger, metrics });

  /** Draws `step`, and reads it again after the draw (`showLatestStep`) when something newer may have been drawn or recorded meanwhile (`mayChangeUnseen`). */
  async function showDecisions(step: PendingStep): Promise<void> {
    // A click can come before the process that posted the card recorded its ts; by the time this
    // decision is written, it usually has (otherwise that process sees the newer revision and updates the card).
    const rendered = step.cardTs === undefined ? ((await store.getStep(step.stepId)) ?? step) : step;
    // A step with no card on record (its first post's outcome not known, looked for by the sweep) may
    // have copies, the one clicked among them: drawn all the same (`showStep` skips the missing card).
    if (rendered.cardTs === undefined && (rendered.copies ?? []).length === 0) return;
    if (mayChangeUnseen(rendered)) await showLatestStep({ store, messenger, step: rendered, logger });
    else await showStep({ messenger, step: rendered, logger });
  }

  /**
   * The request with what the server adds: an edit's policy, evaluated for the edited input, and
   * the config in force's evaluation of the version waiting (a deploy may have changed the policy
   * since the card was posted).
   */
  async function judged(step: PendingStep, call: PendingCall, request: CallDecisionRequest): Promise<{ full: CallActionRequest; currentPolicy?: PolicyEvaluation }> {
    const { action } = request;
    const version = isQuestion(call) ? undefined : currentVersion(call);
    // Both may run a tool's own approval rule (async): at once, not one after the other.
    const [currentPolicy, editedPolicy] = await Promise.all([
      version ? options.evaluateInput({ step, call, input: version.input }) : undefined,
      action.kind === 'edit' ? options.evaluateInput({ step, call, input: action.input }) : undefined,
    ]);
    const governing = currentPolicy ? { currentPolicy } : {};
    if (action.kind !== 'edit') return { full: { ...request, action }, ...governing };
    if (!editedPolicy) throw new Error('an edit was judged without its policy');
    return { full: { ...request, action: { ...action, policy: editedPolicy } }, ...governing };
  }

  async function groupsFor(call: PendingCall, request: CallActionRequest, currentPolicy: PolicyEvaluation | undefined): Promise<GroupMembers> {
    const policies = [currentVersion(call)?.policy, currentPolicy, request.action.kind === 'edit' ? request.action.policy : undefined];
    const groupIds = policies.flatMap((policy) => (policy ? approverGroupIds(policy) : []));
    return groupIds.length === 0 ? new Map() : options.resolveGroups(groupIds);
  }

  /** `due`: for a write Redis refused as 'expired', the deadline it refused it at (see `expireNow`). */
  async function refuse(step: PendingStep | undefined, request: CallDecisionRequest, code: string, message: string, { due }: { due?: number } = {}): Promise<RecordOutcome> {
    const call = step?.calls.find((candidate) => candidate.approvalId === request.approvalId);
    // The step's workspace and channel (a click on a copy elsewhere is about the step), else the click's.
    const where = step ?? request.origin;
    await appendQuietly(
      audit,
      {
        type: 'action-refused',
        ...(where.teamId ? { teamId: where.teamId } : {}),
        ...(where.channel ? { channel: where.channel } : {}),
        stepId: request.stepId,
        approvalId: request.approvalId,
        ...(call ? { toolName: call.toolName } : {}),
        userId: request.userId,
        action: actionName(request.action),
        code,
        reason: message,
      },
      logger,
    );
    metrics.actionRefused({ reason: code });
    if (step && OUTDATED_CARD_REFUSALS.has(code)) return { recorded: false, message, ...(outdatedCard(step, code) ? { outdated: step } : {}) };
    if (code !== 'expired' || !options.expireNow) return { recorded: false, message };
    // Not awaited here: closing the step updates the card and every copy (a chat.update each), and a
    // form's answer, this refusal, is due within Slack's 3 s. The expiry is written at once all the same.
    const closing = options.expireNow(request.stepId, due === undefined ? {} : { due }).catch((error: unknown) => {
      logger.warn({ event: 'expire-now-failed', stepId: request.stepId, err: error }, 'could not close an expired step');
    });
    return { recorded: false, message, closing };
  }

  /**
   * Whether a click refused as `code` came from a card that should no longer show its button
   * (`OUTDATED_CARD_REFUSALS`) and is the clicker's to draw: not while the step's newest change is
   * recent enough that its own drawer may still be drawing it (`OUTDATED_CARD_DRAWN_AFTER_MS`).
   */
  function outdatedCard(step: PendingStep, code: string): boolean {
    if (!OUTDATED_CARD_REFUSALS.has(code)) return false;
    const changedAt = stepChangedAt(step);
    return changedAt === undefined || now() - changedAt >= OUTDATED_CARD_DRAWN_AFTER_MS;
  }

  /**
   * For a click refused outside `record`, by a card button that opens a form (Deny with reason…,
   * Edit…, Approve & allow…, Reply…) with the codes `record` gives: its card is drawn as stored
   * under the same rule as a refused Approve's (`outdatedCard`), so it heals at whichever button is
   * clicked first. `step`: as the click read it.
   */
  async function showIfOutdated(step: PendingStep, code: string): Promise<void> {
    if (outdatedCard(step, code)) await showOutdated(step);
  }

  /**
   * The atomic part: fast (a read and a write per attempt), so it fits inside a modal submit's ack
   * window. `storeWaitMs` (clicks, whose ack Slack already has) is how long to keep trying while
   * Redis is unavailable: a restart, or the bot's reconnect after a failover, takes seconds, and a
   * decision recorded a moment late beats "try again". A write that failed is sent again as it was
   * (its attempt key), so one that landed before its reply was lost answers as it did, not as a
   * second decision; only a conflict with another writer reads the step afresh.
   */
  async function record(request: CallDecisionRequest, recordOptions: { storeWaitMs?: number } = {}): Promise<RecordOutcome> {
    const receivedAt = Date.now();
    // One for the whole decision: its reads and writes share the deadline.
    const storeWait = { stepId: request.stepId, waitUntil: receivedAt + (recordOptions.storeWaitMs ?? 0) };
    // Started before the write that completes a step: the resume it queues continues from it.
    let completing: DecisionSpan | undefined;
    // Set while a write is unanswered after a try that may have run: then a failure is not "nothing changed".
    let unsettled = false;
    try {
      // Counts conflicts with other writers only: tries after an outage are bounded by `waitUntil`.
      for (let conflicts = 0; conflicts < MAX_ATTEMPTS; ) {
        const step = await whileStoreReturns(() => store.getStep(request.stepId), storeWait);
        const call = step?.calls.find((candidate) => candidate.approvalId === request.approvalId);
        if (!step || !call) return await refuse(step, request, 'not-found', NOT_OPEN);
        const { full, currentPolicy } = await judged(step, call, request);
        const groupMembers = await groupsFor(call, full, currentPolicy);
        const context = { now: now(), groupMembers, newGrantId, ...(currentPolicy ? { currentPolicy } : {}) };
        const result = applyCallAction(step, full, context);
        if (!result.ok) return await refuse(step, request, result.refusal.code, result.refusal.message);
        const { transition, effect } = result;
        // Before the write that may take the thread's lock: the lock is ours from then at most.
        const askedAt = Date.now();
        let write: () => ReturnType<StateStore['commitStepAndQueue']>;
        // One name for this write, however often it is sent (see `StateStore.commitStep`).
        const attempt = randomUUID();
        // The resume this click queues: the claim's item may be the thread's older work instead (`TakenClaim.request`).
        let resume: string | undefined;
        if (transition.completed) {
          completing ??= startDecisionSpan({ tracer, step, call, request, receivedAt });
          const { traceparent } = completing;
          // The resume is queued in the same write as the decision, so it can never be lost between them.
          const item = encodeWorkItem({ kind: 'resume', stepId: step.stepId, channel: step.channel, threadTs: step.threadTs, ...(traceparent ? { traceparent } : {}) });
          resume = item;
          write = () => store.commitStepAndQueue(transition, { item, ...worker.queueing, attempt });
        } else write = () => store.commitStep(transition, { attempt });
        // A write that failed outright may have landed before its connection went (the reply lost,
        // and Redis unreachable for longer than ioredis resends): it is sent again as it was, under
        // its attempt key, which answers as the write did (its claim on the thread's lock too). Read
        // afresh instead, the step would hold this very decision and it would be refused as made twice,
        // and nobody would drain the lock it took until the lock lapsed.
        let committed: Awaited<ReturnType<typeof write>> | { result: 'unavailable' };
        const retryUnavailable = unavailableAsRetry(storeWait);
        do
          committed = await write().catch((error: unknown) => {
            // Redis answered it with a refusal, or it was never sent: it did not run.
            unsettled ||= !writeDidNotRun(error);
            return retryUnavailable(error);
          });
        while (committed.result === 'unavailable');
        // Redis answered this attempt: whatever it said is what happened.
        unsettled = false;
        // Judged in time by this replica's clock, but Redis's (the one every replica shares) says the deadline had passed.
        if (committed.result === 'expired') {
          const { refusal, due } = pastDeadlineRefusal(step, transition, context);
          return await refuse(step, request, refusal.code, refusal.message, due === undefined ? {} : { due });
        }
        if (committed.result === 'conflict') {
          conflicts += 1;
          continue;
        }
        if (committed.result !== 'committed') return await refuse(step, request, 'not-found', NOT_OPEN);
        // A Deny the replicas did not confirm in time stands, but a failover could still undo it: the person is told so.
        const { unconfirmed } = committed;
        if (unconfirmed) logger.warn({ event: 'withdrawal-not-confirmed', stepId: step.stepId, approvalId: call.approvalId, ...unconfirmed }, 'recorded a decision that withdraws authority, but Redis replicas did not confirm it in time');
        faultPoint('after-decision');
        metrics.decisionRecorded({ toolName: call.toolName, outcome: metricOutcome(effect), waitedMs: now() - step.createdAt });
        const span = completing ?? startDecisionSpan({ tracer, step, call, request, receivedAt });
        completing = undefined;
        endDecisionSpan(span, { tracer, step, call, outcome: metricOutcome(effect), completed: transition.completed === true, now: now() });
        return {
          recorded: true,
          step: transition.step,
          completedStep: transition.completed === true,
          effect,
          ...(unconfirmed ? { notice: unconfirmedNotice(effect, request, unconfirmed) } : noticeFor(effect)),
          // Counted by the worker from now (`claimTaken`): the card is drawn before the drain begins.
          ...(committed.claim ? { claim: worker.claimTaken(step.threadKey, { ...committed.claim, askedAt, ...(resume ? { request: resume } : {}) }) } : {}),
        };
      }
      logger.warn({ event: 'decision-contended', stepId: request.stepId }, 'gave up recording a decision after repeated conflicts');
      return { recorded: false, message: ':warning: Many people acted on this card at once and I could not record yours, so nothing changed. Please try again.' };
    } catch (error) {
      if (isNewerSchemaError(error)) return await refuse(undefined, request, 'newer-schema', NEWER_RELEASE_CLICK_TEXT);
      if (unsettled) {
        logger.error({ event: 'decision-unsettled', stepId: request.stepId, err: error }, 'could not learn whether a decision was recorded: its write may have run before Redis stopped answering');
        return { recorded: false, message: unsettledDecisionText(request.action.kind), unsettled: { stepId: request.stepId, error } };
      }
      logger.error({ event: 'decision-store-failed', stepId: request.stepId, err: error }, 'could not record decision');
      return { recorded: false, message: ':warning: I could not record your decision, so nothing changed. Please try again.' };
    } finally {
      // A span started for a write that never happened says so.
      if (completing) completing.span.setAttribute('countersign.decision.outcome', 'not-recorded').end();
    }
  }

  /**
   * The slow part, after Slack has its acknowledgement: update the card, then run the resume this
   * process took; for a refusal, wait for the expiry it set off (`closing`), if any.
   */
  async function publish(outcome: RecordOutcome): Promise<void> {
    if (!outcome.recorded) {
      // A decision that may have landed: its card is drawn again from the step as Redis has it, by this process's
      // tries over some seconds, and by the sweep when Redis took the refresh (it may not have, still unreachable).
      // Redis may stay unreachable past those tries (a Sentinel failover takes 30 s): the refresh is kept once it answers.
      // Each draw posts first the copies the step's routing lacks: an edit that landed under a rule routed elsewhere.
      if (outcome.unsettled) await options.cardRefreshes?.redraw({ ...outcome.unsettled, untilStoreAnswers: true });
      if (outcome.outdated) await showOutdated(outcome.outdated);
      return outcome.closing;
    }
    const step = outcome.effect.kind === 'new-version' ? await postCopiesForEdit(outcome.step) : outcome.step;
    let redrawing: Promise<void> | undefined;
    try {
      await showDecisions(step);
    } catch (error) {
      logger.warn({ event: 'card-update-failed', stepId: step.stepId, err: error }, 'could not update approval card');
      // Left as it is, the card would show what the server no longer judges clicks by (after an edit:
      // the version it refuses) until the step changes again, which may be never.
      redrawing = options.cardRefreshes?.redraw({ stepId: step.stepId, error });
    }
    // Queued with the decision; when the thread's lock was free this process took it and drains it,
    // while the card's tries go on: the resumed turn does not wait for them.
    await Promise.all([redrawing, outcome.claim ? worker.drainClaimed(step.threadKey, outcome.claim) : undefined]);
  }

  /**
   * Draws the step a click on an outdated card found (`OUTDATED_CARD_REFUSALS`), reading it again after
   * the draw: its own drawer may be drawing it too, or a newer state. A failure is only logged: the
   * next click on the card tries again.
   */
  async function showOutdated(step: PendingStep): Promise<void> {
    await showDecisions(step).catch((error: unknown) => {
      logger.warn({ event: 'card-update-failed', stepId: step.stepId, err: error }, 'could not draw an outdated approval card again');
    });
  }

  /**
   * An edit can put a call under a rule routed elsewhere (another channel, other approvers to DM):
   * its copies go there before the cards are shown, so the thread's card shows where they are.
   */
  async function postCopiesForEdit(step: PendingStep): Promise<PendingStep> {
    return withMissingCopies({ store, messenger, takeBacks, logger, step, currentEvaluation: options.evaluateInput, failure: 'could not post copies for an edited call' });
  }

  return { record, publish, showIfOutdated };
}

export type CallDecider = ReturnType<typeof createCallDecider>;

interface DecisionSpan {
  span: Span;
  parent: Context;
  traceparent: string | undefined;
}

/**
 * The decision as a span in the trace of the turn that paused (its `traceparent` is on the step),
 * from when the click arrived; its `traceparent` is what the resumed turn continues from.
 */
function startDecisionSpan(options: { tracer: Tracer; step: PendingStep; call: PendingCall; request: CallDecisionRequest; receivedAt: number }): DecisionSpan {
  const { tracer, step, call, request } = options;
  const parent = contextFromTraceparent(step.traceparent);
  const span = tracer.startSpan('countersign.decision', { startTime: options.receivedAt, attributes: { 'countersign.step_id': step.stepId, 'countersign.tool': call.toolName, 'countersign.decision.user': request.userId } }, parent);
  return { span, parent, traceparent: traceparentOf(trace.setSpan(parent, span)) };
}

/** Ends the decision span with its outcome; a decision that completes the step adds the wait for people, from the request to now. */
function endDecisionSpan({ span, parent }: DecisionSpan, options: { tracer: Tracer; step: PendingStep; call: PendingCall; outcome: string; completed: boolean; now: number }): void {
  const { tracer, step, call } = options;
  span.setAttribute('countersign.decision.outcome', options.outcome);
  if (options.completed) {
    tracer.startSpan('countersign.approval_wait', { startTime: step.createdAt, attributes: { 'countersign.step_id': step.stepId, 'countersign.tool': call.toolName } }, parent).end(Math.max(step.createdAt, options.now));
  }
  span.end();
}

/** What the person who edited is told privately when their edit is the new version to approve. */
function noticeFor(effect: CallActionEffect): { notice?: string } {
  if (effect.kind !== 'new-version') return {};
  const { version, counted, have, need } = effect;
  const who = whoCanApprove(version.policy);
  if (counted) {
    return { notice: `Your edit is version ${version.number + 1}; your approval of it counts (${have} of ${need}). Earlier approvals were for other input, so they no longer count.` };
  }
  return {
    notice: `Your edit is version ${version.number + 1}, but under the policy for the new input only ${who} can approve it${need > 1 ? ` (${need} approvals)` : ''}, so your edit does not count as an approval. It runs only once they approve it.`,
  };
}

/** What the person is told when their decision withdrew authority but Redis's replicas did not confirm it in time. */
function unconfirmedNotice(effect: CallActionEffect, request: CallDecisionRequest, shortfall: ReplicaShortfall): string {
  const ownDenial = effect.kind === 'decided' && effect.decision.outcome === 'denied' && effect.decision.userId === request.userId;
  return `${ownDenial ? ':x: Denied.' : 'Recorded.'} ${unconfirmedWithdrawalText(shortfall, 'If the card shows the request open again, decide it again.')}`;
}

function actionName(action: CallDecisionRequest['action']): string {
  if (action.kind === 'approve' && action.grant) return 'grant';
  return action.kind;
}

function metricOutcome(effect: CallActionEffect): Parameters<Metrics['decisionRecorded']>[0]['outcome'] {
  if (effect.kind === 'counted') return 'counted';
  if (effect.kind === 'new-version') return 'edited';
  const { outcome } = effect.decision;
  return outcome === 'approved' || outcome === 'answered' ? outcome : 'denied';
}

/**
 * Whether a state newer than `step` may be drawn, or a message of it recorded, while its draw is on
 * its way, so that only a read after the draw can tell: a step still pending (a decision on another
 * of its calls, drawn by its own process, may land first); a copy its routing asks for and it lacks
 * (posted and recorded by another process outside the revision, that process's own read after its
 * draw having come before this decision's write). Otherwise every drawer of an older state reads the
 * step again after drawing (`showLatestStep`: card refreshes, escalation hops, the expiry, the turn's
 * `refreshCard`), and the resume's claim, which alone changes a decided step (closing a call, or
 * every call of a lost thread), then has the sweep draw it again later (`sweepShowsLater`). The usual click, which completes the step,
 * draws once and reads nothing more before the resumed turn.
 */
function mayChangeUnseen(step: PendingStep): boolean {
  return step.phase === 'pending' || awaitsCopies(step);
}
