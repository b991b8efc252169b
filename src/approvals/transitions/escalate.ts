import type { AuditEventInput } from '../../audit/audit-event.js';
import { approverKey, type EscalationStage } from '../../config/policy-config-schema.js';
import { currentVersion } from '../input-version.js';
import type { PendingStep } from '../pending-step.js';
import { withAddedApprovers } from '../policy/escalated-approvers.js';
import { callsOnStepLadder, stepLadderRule } from '../policy/escalation-scope.js';
import { nextHopAt } from '../policy/next-hop-at.js';
import { nextRevision, type StepTransition } from './step-transition.js';

/**
 * The next hop of a step's escalation ladder, once its time has come: the fallback approvers of
 * the hop may decide every call still waiting under the rule the ladder came from (clicks are
 * judged by the call's current policy, so they are accepted from now on), and the ladder moves on.
 * Calls under other rules keep their own approvers. Once no call under that rule waits (each
 * decided, or edited to another rule), the ladder stops instead: its hops would reach nobody, and a
 * reminding one would ping another rule's approvers, so the step keeps no next hop (no `stage`,
 * nothing to announce; the sweep takes it off the schedule) until an edit puts a call back under
 * that rule (`resumeStoppedLadder`). Undefined when there is nothing to do:
 * the step is closed, expired (expiry stays the last step), not due yet, or already escalated by
 * another process, so the store's revision check lets exactly one process make each hop. Pure.
 */
export function escalateTransition(step: PendingStep, { now }: { now: number }): { transition: StepTransition; stage?: EscalationStage } | undefined {
  const { escalation } = step;
  if (step.phase !== 'pending' || escalation?.nextAt === undefined || now < escalation.nextAt) return undefined;
  if (step.expiresAt !== undefined && now >= step.expiresAt) return undefined;
  const stage = escalation.ladder[escalation.done];
  if (!stage) return undefined;
  const next = nextRevision(step);
  const rule = stepLadderRule(step);
  if (callsOnStepLadder(step).length === 0) {
    next.escalation = { ladder: escalation.ladder, ...(rule === undefined ? {} : { rule }), done: escalation.done };
    return { transition: { step: next, fromRevision: step.revision, audit: [] } };
  }
  const done = escalation.done + 1;
  const following = escalation.ladder[done];
  // A following hop due at or after the expiry is never made: the ladder stops here.
  const nextAt = nextHopAt({ at: following === undefined ? undefined : step.createdAt + following.afterMs, expiresAt: step.expiresAt });
  next.escalation = { ladder: escalation.ladder, ...(rule === undefined ? {} : { rule }), done, ...(nextAt === undefined ? {} : { nextAt }) };
  const audit: AuditEventInput[] = [];
  for (const call of callsOnStepLadder(next)) {
    const version = currentVersion(call)!;
    version.policy = withAddedApprovers(version.policy, stage.addApprovers);
    audit.push({
      type: 'escalated',
      teamId: step.teamId,
      stepId: step.stepId,
      approvalId: call.approvalId,
      toolName: call.toolName,
      hop: done,
      hops: escalation.ladder.length,
      reminded: stage.remind,
      addedApprovers: stage.addApprovers.map(approverKey),
    });
  }
  return { transition: { step: next, fromRevision: step.revision, audit }, stage };
}

/**
 * A ladder that stopped (a hop came due when no call waited under its rule, so the step kept no
 * next hop) goes on once a call waits under that rule again: an edit moved one there, the call the
 * ladder came from or another of the step. Its hops keep their times from the request, as an edit
 * never restarts the clock: the hop that found nobody, and any other whose time has passed, is due
 * at `now` (the next sweep makes each, as after a sweep that was down), the later ones at their
 * times, and none at or after the expiry. Sets `next.escalation.nextAt`; true when it did, so the
 * write that stores `next` also puts the hop on the schedule (`StepTransition.rescheduled`).
 */
export function resumeStoppedLadder(next: PendingStep, { now }: { now: number }): boolean {
  const { escalation } = next;
  if (next.phase !== 'pending' || !escalation || escalation.nextAt !== undefined) return false;
  const stage = escalation.ladder[escalation.done];
  if (!stage || callsOnStepLadder(next).length === 0) return false;
  const nextAt = nextHopAt({ at: Math.max(next.createdAt + stage.afterMs, now), expiresAt: next.expiresAt });
  if (nextAt === undefined) return false;
  next.escalation = { ...escalation, nextAt };
  return true;
}
