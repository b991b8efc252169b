import { type Metrics, noMetrics } from '../metrics/metrics.js';
import { randomUUID } from 'node:crypto';
import { trace, type Tracer } from '@opentelemetry/api';
import { contextFromTraceparent, countersignTracer, traceparentOf } from '../tracing/trace-context.js';
import type { Logger } from 'pino';
import { appendQuietly, type AuditLog } from '../audit/audit-log.js';
import type { ThreadWorker } from '../conversation/thread-worker.js';
import type { ThreadMessenger } from '../conversation/thread-messenger.js';
import type { StateStore } from '../store/state-store.js';
import { faultPoint } from '../runtime/fault-points.js';
import { currentVersion } from './input-version.js';
import { showStep } from './show-step.js';
import type { PendingCall, PendingStep } from './pending-step.js';
import { approverGroupIds, type GroupMembers } from './policy/approver-eligibility.js';
import { whoCanApprove } from './policy/describe-approvers.js';
import type { PolicyEvaluation } from './policy/evaluate-policy.js';
import { applyCallAction, type CallAction, type CallActionEffect, type CallActionRequest } from './transitions/call-action.js';

export { alreadyDecidedText } from './transitions/call-action.js';

export interface DecideCallOptions {
  store: StateStore;
  messenger: ThreadMessenger;
  worker: ThreadWorker;
  logger: Logger;
  audit: AuditLog;
  /** Members of the user groups a policy names (cached `usergroups.users.list`). */
  resolveGroups: (groupIds: readonly string[]) => Promise<GroupMembers>;
  /** The policy's answer for an edited input: the new version is approved under it. */
  evaluateInput: (options: { step: PendingStep; call: PendingCall; input: unknown }) => Promise<PolicyEvaluation>;
  /** Closes a step whose expiry a click found passed, at once rather than at the next sweep. */
  expireNow?: (stepId: string) => Promise<void>;
  now?: () => number;
  newGrantId?: () => string;
  /** Decisions and refusals counted for the operator's dashboards. */
  metrics?: Metrics;
  /** Where decision spans go; default the global tracer provider's. */
  tracer?: Tracer;
}

/** What a person did, before the server judged it; an edit carries the input, not its policy. */
export type CallDecisionRequest = Omit<CallActionRequest, 'action'> & {
  action: Exclude<CallAction, { kind: 'edit' }> | Omit<Extract<CallAction, { kind: 'edit' }>, 'policy'>;
};

export type RecordOutcome =
  | { recorded: true; step: PendingStep; completedStep: boolean; effect: CallActionEffect; notice?: string; traceparent?: string }
  /** Nothing changed; `message` tells the person why, in their words. */
  | { recorded: false; message: string };

const NOT_OPEN = 'This approval request is no longer open, so nothing changed.';
/** Concurrent clicks on one step each retry on a conflict; a step has few calls, so few rounds. */
const MAX_ATTEMPTS = 25;

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
  const newGrantId = options.newGrantId ?? (() => randomUUID().replaceAll('-', '').slice(0, 16));

  async function showDecisions(step: PendingStep): Promise<void> {
    let rendered = step;
    // No fixed number of rounds: while this update was on its way, the decision that completed the
    // step may have been shown by its own process, and this stale update landed after it. Stopping
    // early would leave buttons on calls that already ran. It ends: every round needs a newer
    // revision, and a pending step has only as many as its calls have decisions and approvals.
    while (rendered.cardTs !== undefined) {
      await showStep({ messenger, step: rendered, logger });
      // Decisions on other calls of a pending step can update the card out of order; once the step
      // is complete nothing can change any more, so only then is the rendering known to be final.
      if (rendered.phase !== 'pending') return;
      const latest = await store.getStep(rendered.stepId);
      if (!latest || latest.revision <= rendered.revision) return;
      rendered = latest;
    }
  }

  /** The request with what the server adds: an edit's policy, evaluated for the edited input. */
  async function judged(step: PendingStep, call: PendingCall, request: CallDecisionRequest): Promise<CallActionRequest> {
    const { action } = request;
    if (action.kind !== 'edit') return { ...request, action };
    return { ...request, action: { ...action, policy: await options.evaluateInput({ step, call, input: action.input }) } };
  }

  async function groupsFor(call: PendingCall, request: CallActionRequest): Promise<GroupMembers> {
    const policies = [currentVersion(call)?.policy, request.action.kind === 'edit' ? request.action.policy : undefined];
    const groupIds = policies.flatMap((policy) => (policy ? approverGroupIds(policy) : []));
    return groupIds.length === 0 ? new Map() : options.resolveGroups(groupIds);
  }

  async function refuse(step: PendingStep | undefined, request: CallDecisionRequest, code: string, message: string): Promise<RecordOutcome> {
    const call = step?.calls.find((candidate) => candidate.approvalId === request.approvalId);
    await appendQuietly(
      audit,
      {
        type: 'action-refused',
        ...(step || request.origin.teamId ? { teamId: step?.teamId ?? request.origin.teamId } : {}),
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
    if (code === 'expired' && options.expireNow) {
      await options.expireNow(request.stepId).catch((error: unknown) => logger.warn({ event: 'expire-now-failed', stepId: request.stepId, err: error }, 'could not close an expired step'));
    }
    return { recorded: false, message };
  }

  /** The atomic part: fast (a read and a write per attempt), so it fits inside a modal submit's ack window. */
  async function record(request: CallDecisionRequest): Promise<RecordOutcome> {
    const receivedAt = Date.now();
    try {
      for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt += 1) {
        const step = await store.getStep(request.stepId);
        const call = step?.calls.find((candidate) => candidate.approvalId === request.approvalId);
        if (!step || !call) return await refuse(step, request, 'not-found', NOT_OPEN);
        const full = await judged(step, call, request);
        const result = applyCallAction(step, full, { now: now(), groupMembers: await groupsFor(call, full), newGrantId });
        if (!result.ok) return await refuse(step, request, result.refusal.code, result.refusal.message);
        const committed = await store.commitStep(result.transition);
        if (committed === 'conflict') continue;
        if (committed !== 'committed') return await refuse(step, request, 'not-found', NOT_OPEN);
        faultPoint('after-decision');
        const { transition, effect } = result;
        metrics.decisionRecorded({ toolName: call.toolName, outcome: metricOutcome(effect), waitedMs: now() - step.createdAt });
        const traceparent = traceDecision({ tracer, step, call, request, outcome: metricOutcome(effect), completed: transition.completed === true, receivedAt, now: now() });
        return { recorded: true, step: transition.step, completedStep: transition.completed === true, effect, ...noticeFor(effect), ...(traceparent ? { traceparent } : {}) };
      }
      logger.warn({ event: 'decision-contended', stepId: request.stepId }, 'gave up recording a decision after repeated conflicts');
      return { recorded: false, message: ':warning: Many people acted on this card at once and I could not record yours, so nothing changed. Please try again.' };
    } catch (error) {
      logger.error({ event: 'decision-store-failed', stepId: request.stepId, err: error }, 'could not record decision');
      return { recorded: false, message: ':warning: I could not record your decision, so nothing changed. Please try again.' };
    }
  }

  /** The slow part, after Slack has its acknowledgement: update the card, resume if complete. */
  async function publish(outcome: Extract<RecordOutcome, { recorded: true }>): Promise<void> {
    const { step } = outcome;
    try {
      await showDecisions(step);
    } catch (error) {
      logger.warn({ event: 'card-update-failed', stepId: step.stepId, err: error }, 'could not update approval card');
    }
    if (outcome.completedStep) {
      const { traceparent } = outcome;
      await worker.submit(step.threadKey, { kind: 'resume', stepId: step.stepId, channel: step.channel, threadTs: step.threadTs, ...(traceparent ? { traceparent } : {}) });
    }
  }

  return { record, publish };
}

export type CallDecider = ReturnType<typeof createCallDecider>;

/**
 * The decision as a span in the trace of the turn that paused (its `traceparent` is on the step),
 * and, when it completes the step, the wait for people as a span from the request to now. Returns
 * the decision span's `traceparent`: the resumed turn continues from it.
 */
function traceDecision(options: {
  tracer: Tracer;
  step: PendingStep;
  call: PendingCall;
  request: CallDecisionRequest;
  outcome: string;
  completed: boolean;
  receivedAt: number;
  now: number;
}): string | undefined {
  const { tracer, step, call, request } = options;
  const parent = contextFromTraceparent(step.traceparent);
  const attributes = { 'countersign.step_id': step.stepId, 'countersign.tool': call.toolName };
  const span = tracer.startSpan('countersign.decision', { startTime: options.receivedAt, attributes: { ...attributes, 'countersign.decision.outcome': options.outcome, 'countersign.decision.user': request.userId } }, parent);
  if (options.completed) tracer.startSpan('countersign.approval_wait', { startTime: step.createdAt, attributes }, parent).end(Math.max(step.createdAt, options.now));
  span.end();
  return traceparentOf(trace.setSpan(parent, span));
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
