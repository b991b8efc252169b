import type { AuditEventInput } from '../../audit/audit-event.js';
import type { Grant } from '../grant.js';
import { decisionOf, type Decision, type PendingCall, type PendingStep } from '../pending-step.js';

/**
 * A change to a pending step, computed by a pure function from the step as read. The store writes
 * it only if the step is still at `fromRevision`, and writes the audit events (and a grant, if
 * any) in the same atomic operation: so a decision is never judged against state that changed
 * meanwhile, and the trail is complete whenever the state is.
 */
export interface StepTransition {
  /** The step as it must be stored; its revision is `fromRevision + 1`. */
  step: PendingStep;
  fromRevision: number;
  audit: AuditEventInput[];
  /**
   * Created together with the approval that allowed it. Its `createdAt` and `expiresAt` are this
   * replica's clock's: the store stamps them again by its own (Redis's `TIME`), keeping the length
   * the approver chose, and its `grant-created` record with them (`stampGrant`).
   */
  grant?: Grant;
  /** Every call is decided now: indexed until a process claims the resume. */
  completed?: boolean;
  /** A process claimed the resume: off that index. */
  resumed?: boolean;
  /** No longer pending: off the expiry and reminder schedules. */
  closed?: boolean;
  /**
   * Still pending, but its deadlines came earlier (an edit put a call under a rule with a shorter
   * expiry or an earlier reminder): the expiry and/or reminder schedules move to the step's
   * `expiresAt` and `remindAt`, in the same write, so the sweep finds it when the clicks do. And
   * `escalation`: an edit put a call back under the rule of a ladder that had stopped (no call
   * waited under it when a hop came due), so its next hop goes on the schedule at the step's
   * `escalation.nextAt`, in the same write.
   */
  rescheduled?: { expiry: boolean; reminder: boolean; escalation?: boolean };
  /**
   * Takes authority away: a call denied, or closed undecided. The store has replicas confirm it
   * before it answers, as it does a call's executing marker: a failover that lost it would open
   * the call again, to an approval the person who withdrew it was told could no longer come. A
   * lost approval only leaves the call pending, so approvals are not waited for.
   */
  withdraws?: boolean;
  /** Only while this thread holder's fencing token is current (claiming a resume, closing from a turn). */
  fence?: { threadKey: string; token: string };
  /**
   * The deadline a person's action must come before (epoch ms: the step's expiry under the policies
   * that govern it, `governingExpiry`). The store refuses the write ('expired') when its own clock
   * says it is at or past it: Redis's `TIME`, the one clock every replica shares, so a replica whose
   * clock runs behind cannot record an approval after the deadline another replica put on the card.
   * The transition was judged with the replica's clock first, for the message; this is the judgement that counts.
   */
  deadline?: number;
}

/**
 * A transition that records what a person or the approval hook did to a call (an approval, an
 * edit, an answer, a denial): it must say its `deadline`, so no producer can leave the expiry to
 * the clock of the process that computed it. Undefined only for a step without one (only a
 * person's questions wait on it).
 */
export type ActionTransition = StepTransition & { deadline: number | undefined };

/** The step's next revision, to change: a deep copy, so the step as read stays what was read. */
export function nextRevision(step: PendingStep): PendingStep {
  const next = structuredClone(step);
  next.revision = step.revision + 1;
  return next;
}

/** The audit record of a decision on a call (approvals carry more; see `applyCallAction`). */
export function decisionEvent(step: PendingStep, call: PendingCall, decision: Decision): AuditEventInput {
  return {
    type: 'decision',
    teamId: step.teamId,
    stepId: step.stepId,
    approvalId: call.approvalId,
    toolName: call.toolName,
    outcome: decision.outcome,
    userId: decision.userId,
    channel: step.channel,
    threadTs: step.threadTs,
    originalInput: call.input,
    ...(decision.reason ? { reason: decision.reason } : {}),
    // An answer steers the turn as a deny reason does: the trail says what the person told the model.
    ...(Object.hasOwn(decision, 'answer') ? { answer: decision.answer } : {}),
  };
}

/** Whether a decision takes authority away (see `StepTransition.withdraws`): anything but an approval or an answer. */
function withdrawsAuthority(decision: Decision): boolean {
  return decision.outcome !== 'approved' && decision.outcome !== 'answered';
}

/** Marks the step complete when `decision` (recorded on `next`) was its last. */
export function completeIfDone(next: PendingStep, audit: AuditEventInput[], decision: Decision): StepTransition {
  const done = next.calls.every((call) => decisionOf(next, call.approvalId) !== undefined);
  if (done) next.phase = 'complete';
  return { step: next, fromRevision: next.revision - 1, audit, ...(done ? { completed: true, closed: true } : {}), ...(withdrawsAuthority(decision) ? { withdraws: true } : {}) };
}
