import { COUNTERSIGN_ACTOR } from '../../agent/decision-messages.js';
import { deciderText } from '../approval-hook.js';
import type { AuditEventInput, InputVersionSummary } from '../../audit/audit-event.js';
import { formatDuration } from '../../config/duration.js';
import { GRANT_HOURS, grantAuditEvent, type Grant, type GrantChoice } from '../grant.js';
import { describeChanges, diffInputs } from '../input-diff.js';
import { approvalsOf, currentVersion, inputHash } from '../input-version.js';
import { decisionOf, hookIsDeciding, isQuestion, type Decision, type InputVersion, type PendingCall, type PendingStep } from '../pending-step.js';
import { approverEligibility, type GroupMembers } from '../policy/approver-eligibility.js';
import { editedDeadlines, governingExpiry, type EditedDeadlines } from '../policy/approval-deadlines.js';
import { withEscalationSoFar, withoutEscalation } from '../policy/escalated-approvers.js';
import type { PolicyEvaluation } from '../policy/evaluate-policy.js';
import { authorizeGoverned, governingEvaluations, governingPolicy, POLICY_CHANGED_TEXT, unchangedSince, type GoverningPolicy } from '../policy/governing-policy.js';
import { nextHopAt } from '../policy/next-hop-at.js';
import { quorumReachable } from '../policy/quorum-reachable.js';
import { strictestEvaluation } from '../policy/strictest-evaluation.js';
import { UNAPPROVABLE_INPUT_TEXT, unapprovableInput } from '../policy/unapprovable-input.js';
import { fromThisCard } from '../card-routing.js';
import { wrongCardText } from '../wrong-card-text.js';
import { mayAnswerQuestion, questionRefusalText } from '../question-answerers.js';
import { CHOOSE_AN_OPTION_TEXT, questionOptionsOf } from '../question-options.js';
import { actionDeadline } from './action-deadline.js';
import { resumeStoppedLadder } from './escalate.js';
import { refusal, type Refusal } from './refusal.js';
import { completeIfDone, decisionEvent, nextRevision, type ActionTransition, type StepTransition } from './step-transition.js';

/** What a person asks to do to one call. Versions come from the card or form they acted on. */
export type CallAction =
  | { kind: 'approve'; version: number; grant?: GrantChoice }
  | { kind: 'deny'; reason?: string }
  /** `policy`: the config in force's evaluation of the edited input. */
  | { kind: 'edit'; fromVersion: number; input: unknown; submittedInput: unknown; policy: PolicyEvaluation }
  | { kind: 'answer'; answer: unknown };

/**
 * Whether the person who acted belongs to the organisation of the workspace the request is in, as
 * the listener established it from the signed payload (and `users.info` on Enterprise Grid):
 * `unverified` when that could not be checked just now.
 */
export type Membership = 'member' | 'external' | 'unverified';

export interface CallActionRequest {
  stepId: string;
  approvalId: string;
  userId: string;
  /**
   * Where the click or form came from, as Slack's signed payload says: the thread's channel or the
   * channel of a recorded copy of the card. `messageTs` (a click's message) must then be that copy.
   */
  origin: { teamId: string | undefined; channel: string | undefined; messageTs?: string | undefined; membership: Membership };
  action: CallAction;
}

export interface CallActionContext {
  now: number;
  /** Members of the groups the call's policies name (the current version's, the config in force's, and an edit's). */
  groupMembers: GroupMembers;
  /**
   * The config in force's evaluation of the current version's input: it governs together with the
   * version's stored policy (`governingPolicy`). Absent: the stored policy alone, as for a config
   * that never changed.
   */
  currentPolicy?: PolicyEvaluation;
  newGrantId: () => string;
}

export type CallActionEffect =
  /** The call is decided: approved (its quorum reached), denied or answered. */
  | { kind: 'decided'; decision: Decision }
  /** An approval counted towards a quorum that is not reached yet. */
  | { kind: 'counted'; have: number; need: number }
  /** An edit is now the version to approve; the editor's approval counts only if they may give it. */
  | { kind: 'new-version'; version: InputVersion; counted: boolean; have: number; need: number };

/** What an action comes to: refused, or a change carrying the deadline it must be written before. */
export type CallActionResult = Judgement<ActionTransition>;

/** An action judged, before `applyCallAction` puts its deadline on the change. */
type Judgement<Transition extends StepTransition = StepTransition> = { ok: false; refusal: Refusal } | { ok: true; transition: Transition; effect: CallActionEffect };

export const EXTERNAL_USER_TEXT = "You are not a member of this workspace's organisation, so you cannot approve, deny or answer its requests; nothing changed.";
/** What a person is told whose action came at or after the request's deadline (by this replica's clock or, at the write, by Redis's). */
const EXPIRED_TEXT = 'This request expired before you acted, so nothing changed and it will not run.';
export const MEMBERSHIP_UNVERIFIED_TEXT = ":warning: I could not check that you are a member of this workspace's organisation just now, so nothing changed. Please try again in a minute.";

/**
 * The one place a person's action on a call is judged and turned into a change. It is judged
 * against the step as stored (never against what a card showed): the workspace and channel it
 * came from, whether the person belongs to that workspace's organisation, expiry, the version
 * the person saw, and the policy of that version together with the config now in force's (the
 * stricter of both; see `governingPolicy`). The store then writes the change only if the
 * step has not moved on since it was read, so the judgement and the write are one atomic step. Pure: no I/O, no clock but `context.now`.
 * That clock is this replica's, which may run behind the one that stamped the deadline on the card:
 * the change carries the deadline (`StepTransition.deadline`), and the store refuses it by Redis's clock.
 */
export function applyCallAction(step: PendingStep | undefined, request: CallActionRequest, context: CallActionContext): CallActionResult {
  const result = judgeCallAction(step, request, context);
  if (!result.ok) return result;
  return { ...result, transition: { ...result.transition, deadline: step && actionDeadline({ read: step, written: result.transition.step, currentPolicy: context.currentPolicy }) } };
}

/**
 * What a person is told whose action this replica's clock (`context.now`) judged in time but whose
 * write Redis's refused as past `transition.deadline`. When that deadline is an edit's (its new
 * rule's expiry came before the request's), the request is still open: only the input as edited
 * can no longer be approved, as a replica with the right clock would have said. Otherwise the
 * request expired, and `due` is the deadline known to have passed (see `expireNow`).
 */
export function pastDeadlineRefusal(step: PendingStep, transition: StepTransition, context: Pick<CallActionContext, 'now' | 'currentPolicy'>): { refusal: Refusal; due?: number } {
  const { deadline } = transition;
  if (deadline === undefined) return { refusal: { code: 'expired', message: EXPIRED_TEXT } };
  const requestDeadline = governingExpiry({ step, current: context.currentPolicy });
  if (requestDeadline !== undefined && deadline >= requestDeadline) return { refusal: { code: 'expired', message: EXPIRED_TEXT }, due: deadline };
  const now = Math.max(context.now, deadline);
  return { refusal: { code: 'edit-past-expiry', message: editPastExpiryText({ expiryMs: deadline - step.createdAt, requestedAt: step.createdAt, now }) } };
}

function judgeCallAction(step: PendingStep | undefined, request: CallActionRequest, context: CallActionContext): Judgement {
  const call = step?.calls.find((candidate) => candidate.approvalId === request.approvalId);
  if (!step || !call) return refusal('not-found', 'This approval request is no longer open, so nothing changed.');
  if (request.origin.teamId !== step.teamId) return refusal('wrong-workspace', 'This request belongs to another Slack workspace, so nothing changed.');
  // In a Slack Connect channel people of a partner organisation see the card and can click it;
  // "anyone in the channel" means anyone of this organisation, for every decision on its requests.
  if (request.origin.membership === 'external') return refusal('external-user', EXTERNAL_USER_TEXT);
  if (request.origin.membership !== 'member') return refusal('membership-unverified', MEMBERSHIP_UNVERIFIED_TEXT);
  if (!fromThisCard(step, request.origin)) return refusal('wrong-channel', wrongCardText(step, { channel: request.origin.channel, userId: request.userId }));
  const decided = decisionOf(step, call.approvalId);
  if (decided) return refusal('already-decided', alreadyDecidedText(decided));
  if (step.phase !== 'pending') return refusal('closed', 'This approval request was already closed, so nothing changed.');
  // The deadline the config in force sets counts too: past it the request has expired, and the
  // caller closes it as the sweep would have (`expireNow`).
  const expiresAt = governingExpiry({ step, current: context.currentPolicy });
  if (expiresAt !== undefined && context.now >= expiresAt) return refusal('expired', EXPIRED_TEXT);
  // The approval hook decides first (a veto must not lose to a click from App Home); only until its time limit.
  if (hookIsDeciding(step, context.now)) return refusal('hook-deciding', 'A policy check is still running on this request, so nothing changed; try again in a moment.');
  const { action } = request;
  if (isQuestion(call)) {
    if (action.kind !== 'answer' && action.kind !== 'deny') return refusal('wrong-kind', 'This is a question; answer it instead.');
    if (!mayAnswerQuestion({ requesterId: step.requesterId, userId: request.userId, inThreadChannel: request.origin.channel === step.channel })) {
      return refusal('not-requester', questionRefusalText({ requesterId: step.requesterId, channel: step.channel, verb: action.kind === 'answer' ? 'answer' : 'decline' }));
    }
    // The model offered these choices and acts on the answer: anything else (a Reply form submitted
    // anyway) is not what the question asked for.
    const options = questionOptionsOf(call);
    if (action.kind === 'answer' && options.length > 0 && !(typeof action.answer === 'string' && options.includes(action.answer))) return refusal('not-an-option', CHOOSE_AN_OPTION_TEXT);
    return decide(step, call, request, context, action.kind === 'answer' ? { outcome: 'answered', answer: action.answer ?? null } : withReason({ outcome: 'denied' }, action.reason));
  }
  if (action.kind === 'answer') return refusal('wrong-kind', 'This call needs an approval, not an answer.');
  const version = currentVersion(call);
  if (!version) return refusal('not-found', 'This approval request is no longer open, so nothing changed.');
  switch (action.kind) {
    case 'deny':
      return deny(step, call, version, request, context, action.reason);
    case 'approve':
      if (action.version !== version.number) return staleVersion(version);
      return approve(step, call, version, request, context, action.grant);
    case 'edit':
      if (action.fromVersion !== version.number) return staleVersion(version);
      return edit(step, call, version, request, context, action);
  }
}

/** What decides the current version: its stored policy and the config in force's evaluation of its input. */
const governingOf = (step: PendingStep, version: InputVersion, context: CallActionContext): GoverningPolicy =>
  governingPolicy({ step, stored: version.policy, current: context.currentPolicy });

/**
 * The person's standing under `governing` (a version's). `approvedBy` are those whose approvals of it
 * count (they may not approve twice; they may change their mind and deny); editing passes none,
 * since an approver may propose a new version of what they approved.
 */
function authorize(
  step: PendingStep,
  governing: GoverningPolicy,
  request: CallActionRequest,
  context: CallActionContext,
  { action, approvedBy }: { action: 'approve' | 'deny'; approvedBy: readonly string[] },
): { ok: false; refusal: Refusal } | undefined {
  const authorization = authorizeGoverned({
    governing,
    userId: request.userId,
    requesterId: step.requesterId,
    instigatorIds: step.instigatorIds,
    groupMembers: context.groupMembers,
    approvedBy,
    action,
    thread: { channel: step.channel, clickedThere: request.origin.channel === step.channel },
  });
  return authorization.allowed ? undefined : refusal(authorization.code, `${authorization.reason}, so nothing changed.`);
}

const counted = (step: PendingStep, call: PendingCall, version: InputVersion) => approvalsOf(step, call, version.number).map((approval) => approval.userId);

export const EDIT_UNAPPROVABLE_TEXT =
  'Nobody could approve the input as edited: it may fall under more than one approval rule, and too few people are approvers under every one of them, so nothing changed. Edit it to an input that falls under one rule.';

/** The reason on a call closed because no approver could decide it any more: the card shows it, and the model reads it as an error. */
export const UNAPPROVABLE_TEXT = 'the approval policy changed since this card was posted and nobody it names can approve this request now; ask again';

/**
 * Earlier approvals of `version` that still count under `governing`, and those that no longer do:
 * the same judgement the resume makes of them (`recheckApprovals`), so a click never reports
 * approved a call the resume would then deny. An approval whose group could not be read stays
 * counted: nobody was found not to be an approver, and the resume checks it again.
 */
function earlierApprovals(step: PendingStep, call: PendingCall, version: InputVersion, governing: GoverningPolicy, context: CallActionContext) {
  const standing: string[] = [];
  const lapsed: { userId: string; reason: string }[] = [];
  for (const userId of [...new Set(counted(step, call, version))]) {
    const authorization = authorizeGoverned({ governing, userId, requesterId: step.requesterId, instigatorIds: step.instigatorIds, groupMembers: context.groupMembers, approvedBy: [] });
    if (authorization.allowed || authorization.code === 'groups-unresolved') standing.push(userId);
    else lapsed.push({ userId, reason: authorization.reason });
  }
  return { standing, lapsed };
}

/**
 * Closes a call no set of people can approve under both the card's policy and the config in force
 * (a deploy replaced its approvers, or raised its quorum past those both name), or under every rule
 * its input may fall under (`unapprovableInput`, where that took reading a group), at the first
 * click rather than leaving a card nobody can decide until it expires. Closed by countersign as an
 * error, not as the clicker's denial: nobody declined the call.
 */
function closeUnapprovable(step: PendingStep, call: PendingCall, version: InputVersion, context: CallActionContext): Extract<Judgement, { ok: true }> {
  const next = nextRevision(step);
  const reason = unapprovableInput({ step, policy: version.policy, groupMembers: context.groupMembers }) ? UNAPPROVABLE_INPUT_TEXT : UNAPPROVABLE_TEXT;
  const decision: Decision = { outcome: 'denied', userId: COUNTERSIGN_ACTOR, at: context.now, reason };
  next.decisions[call.approvalId] = decision;
  return { ok: true, transition: completeIfDone(next, [decisionEvent(step, call, decision)], decision), effect: { kind: 'decided', decision } };
}

/** Whether nobody could approve `version` under both policies (and every rule its input may fall under), even after the hops of the ladder still to come. */
const unapprovable = (step: PendingStep, version: InputVersion, context: CallActionContext) =>
  !quorumReachable({
    step,
    stored: version.policy,
    current: context.currentPolicy,
    requesterId: step.requesterId,
    ...(step.instigatorIds ? { instigatorIds: step.instigatorIds } : {}),
    groupMembers: context.groupMembers,
  });

function deny(step: PendingStep, call: PendingCall, version: InputVersion, request: CallActionRequest, context: CallActionContext, reason: string | undefined): Judgement {
  const governing = governingOf(step, version, context);
  const refused = authorize(step, governing, request, context, { action: 'deny', approvedBy: counted(step, call, version) });
  if (refused && unapprovable(step, version, context)) return closeUnapprovable(step, call, version, context);
  return refused ?? decide(step, call, request, context, withReason({ outcome: 'denied' }, reason));
}

function approve(
  step: PendingStep,
  call: PendingCall,
  version: InputVersion,
  request: CallActionRequest,
  context: CallActionContext,
  grantChoice: GrantChoice | undefined,
): Judgement {
  const governing = governingOf(step, version, context);
  if (unapprovable(step, version, context)) return closeUnapprovable(step, call, version, context);
  const { standing, lapsed } = earlierApprovals(step, call, version, governing, context);
  const refused = authorize(step, governing, request, context, { action: 'approve', approvedBy: standing });
  if (refused) return refused;
  let grant: Grant | undefined;
  if (grantChoice) {
    const notAllowed = grantRefusal(governing, grantChoice);
    if (notAllowed) return { ok: false, refusal: notAllowed };
    const evaluation = grantEvaluation({ step, governing, version, userId: request.userId, context });
    if ('code' in evaluation) return { ok: false, refusal: evaluation };
    grant = buildGrant({ step, call, version, userId: request.userId, choice: grantChoice, context, evaluation, governing });
  }
  const next = nextRevision(step);
  withoutLapsed(next, call, version, lapsed);
  const result = quorumOutcome(next, call, version, governing.required, request.userId, context.now, countApproval(next, call, version, request.userId, context.now));
  // The card's "N of M approvals" counts what is on the step: approvals that no longer hold come off it, on the record.
  result.transition.audit.unshift(...lapsed.map((approval) => lapsedEvent(step, call, approval)));
  if (!grant || result.effect.kind !== 'decided') return result;
  // A grant rides on an approval that decides the call (a one-approver rule), in the same write.
  result.transition.grant = grant;
  result.transition.audit.push(grantAuditEvent('grant-created', grant, grant.grantedBy));
  return result;
}

function edit(
  step: PendingStep,
  call: PendingCall,
  current: InputVersion,
  request: CallActionRequest,
  context: CallActionContext,
  action: Extract<CallAction, { kind: 'edit' }>,
): Judgement {
  // Editing is proposing what runs: it takes the standing to approve what is there now.
  const governingNow = governingOf(step, current, context);
  if (unapprovable(step, current, context)) return closeUnapprovable(step, call, current, context);
  const refused = authorize(step, governingNow, request, context, { action: 'approve', approvedBy: [] });
  if (refused) return refused;
  const hash = inputHash(action.input);
  // Nothing changed: an approval of the version on the card.
  if (hash === current.inputHash) return approve(step, call, current, request, context, undefined);

  // Fallback approvers the escalation ladder added so far stay while the input is under the rule
  // the ladder came from (an edit does not undo a hop); an edit to another rule gets that rule's own.
  const policy = withEscalationSoFar({ evaluation: editedPolicy({ step, current, action, context }), step });
  // The new input's rule counts from the request, like the rule it was requested under: so an edit
  // to a stricter rule (staging to prod) cannot be approved after that rule's expiry.
  // And so does the one the config in force sets for it, which `editedPolicy` may not have taken.
  // An input that may fall under rules nobody is an approver under at once is no proposal anyone could approve.
  if (unapprovableInput({ step, policy, groupMembers: context.groupMembers })) return refusal('edit-unapprovable', EDIT_UNAPPROVABLE_TEXT);
  const deadlines = editedDeadlines({ step, evaluation: policy, inForce: action.policy, now: context.now });
  if (deadlines.expiresAt <= context.now) return refusal('edit-past-expiry', editPastExpiryText({ expiryMs: deadlines.expiresAt - step.createdAt, requestedAt: step.createdAt, now: context.now }));
  const version: InputVersion = {
    number: current.number + 1,
    input: action.input,
    submittedInput: action.submittedInput,
    inputHash: hash,
    editedBy: request.userId,
    at: context.now,
    policy,
  };
  const next = nextRevision(step);
  const nextCall = next.calls.find((candidate) => candidate.approvalId === call.approvalId)!;
  nextCall.versions = [...(nextCall.versions ?? []), version];
  const rescheduled = withDeadlines(next, deadlines, context.now);
  const edited: AuditEventInput = {
    type: 'input-edited',
    teamId: step.teamId,
    stepId: step.stepId,
    approvalId: call.approvalId,
    toolName: call.toolName,
    userId: request.userId,
    channel: step.channel,
    threadTs: step.threadTs,
    version: version.number,
    inputHash: hash,
    input: action.input,
    changes: describeChanges(diffInputs(current.input, action.input)),
  };
  // The new version is judged like any other: its policy and the config in force's for its input.
  const governing = governingPolicy({ step, stored: policy, current: action.policy });
  const eligible = authorizeGoverned({
    governing,
    userId: request.userId,
    requesterId: step.requesterId,
    instigatorIds: step.instigatorIds,
    groupMembers: context.groupMembers,
    approvedBy: [],
    thread: { channel: step.channel, clickedThere: request.origin.channel === step.channel },
  }).allowed;
  if (!eligible) {
    recordQuorum(next, nextCall, version, governing.required);
    return {
      ok: true,
      transition: { step: next, fromRevision: step.revision, audit: [edited], ...(rescheduled ? { rescheduled } : {}) },
      effect: { kind: 'new-version', version, counted: false, have: 0, need: governing.required },
    };
  }
  const result = quorumOutcome(next, nextCall, version, governing.required, request.userId, context.now, countApproval(next, nextCall, version, request.userId, context.now));
  result.transition.audit.unshift(edited);
  // An edit whose approval decides the step closes it, which takes it off every schedule.
  if (rescheduled && !result.transition.closed) result.transition.rescheduled = rescheduled;
  if (result.effect.kind === 'counted') result.effect = { kind: 'new-version', version, counted: true, have: result.effect.have, need: result.effect.need };
  return result;
}

/**
 * Puts the edited deadlines on `next` (the edit's version already on it); returns the schedules
 * that must move with them: the expiry and reminder when they came earlier, and the escalation
 * schedule when the edit put a call back under the rule of a ladder that had stopped.
 */
function withDeadlines(next: PendingStep, deadlines: EditedDeadlines, now: number): StepTransition['rescheduled'] {
  next.expiresAt = deadlines.expiresAt;
  if (deadlines.remindAt !== undefined) next.remindAt = deadlines.remindAt;
  // Expiry stays the last step: a hop due at or after it will never come, so the card stops promising it.
  if (next.escalation !== undefined && nextHopAt({ at: next.escalation.nextAt, expiresAt: deadlines.expiresAt }) === undefined) delete next.escalation.nextAt;
  const ladderResumed = resumeStoppedLadder(next, { now });
  if (!deadlines.expiryMoved && !deadlines.reminderMoved && !ladderResumed) return undefined;
  return { expiry: deadlines.expiryMoved, reminder: deadlines.reminderMoved, ...(ladderResumed ? { escalation: true } : {}) };
}

function editPastExpiryText({ expiryMs, requestedAt, now }: { expiryMs: number; requestedAt: number; now: number }): string {
  return (
    `Under the policy for the edited input, requests expire ${formatDuration(expiryMs)} after they are made, and this one was made ` +
    `${formatDuration(now - requestedAt)} ago, so it cannot be approved as edited; nothing changed. The input as it is can still be approved or denied.`
  );
}

/**
 * The policy a new version is stored with. Where the config in force says of the card's input what
 * the card said, it judges the edited input alone (an edit from prod to staging gets the staging
 * rule). Where it does not, this process's config is not the one the card was made under: a replica
 * still on the old release during a rolling deploy, or the card from before one. It cannot tell
 * whether the edit leaves the card's rule, so the card's rule stays unless its own answer is
 * stricter; every later click and the resume also hold the version to the config in force. An
 * input that the policy lets through unasked still waits for the approvers it had: an edit never
 * lowers the bar set for the call.
 */
function editedPolicy({ step, current, action, context }: { step: PendingStep; current: InputVersion; action: Extract<CallAction, { kind: 'edit' }>; context: CallActionContext }): PolicyEvaluation {
  if (!action.policy.needsApproval) return current.policy;
  if (unchangedSince({ step, stored: current.policy, current: context.currentPolicy })) return action.policy;
  return strictestEvaluation([current.policy, action.policy]);
}

/** Takes the approvals of `version` that no longer hold off `next`. */
function withoutLapsed(next: PendingStep, call: PendingCall, version: InputVersion, lapsed: readonly { userId: string }[]): void {
  const approvals = next.approvals?.[call.approvalId];
  if (!approvals || lapsed.length === 0) return;
  const gone = new Set(lapsed.map((approval) => approval.userId));
  next.approvals![call.approvalId] = approvals.filter((approval) => approval.version !== version.number || !gone.has(approval.userId));
}

/** An earlier approval a click found no longer holds, as the resume records one it revokes. */
function lapsedEvent(step: PendingStep, call: PendingCall, { userId, reason }: { userId: string; reason: string }): AuditEventInput {
  return { type: 'action-refused', teamId: step.teamId, channel: step.channel, stepId: step.stepId, approvalId: call.approvalId, toolName: call.toolName, userId, action: 'approve', code: 'approval-revoked', reason };
}

/** Adds the person's approval of `version` to `next`; returns the approvals of that version now. */
function countApproval(next: PendingStep, call: PendingCall, version: InputVersion, userId: string, now: number): string[] {
  const approvals = ((next.approvals ??= {})[call.approvalId] ??= []);
  approvals.push({ userId, at: now, version: version.number, inputHash: version.inputHash });
  return approvalsOf(next, call, version.number).map((approval) => approval.userId);
}

function quorumOutcome(
  next: PendingStep,
  call: PendingCall,
  version: InputVersion,
  required: number,
  userId: string,
  now: number,
  approvedBy: string[],
): Extract<Judgement, { ok: true }> {
  const need = Math.max(1, required);
  const have = approvedBy.length;
  recordQuorum(next, call, version, need);
  const base: AuditEventInput = {
    type: 'decision',
    teamId: next.teamId,
    stepId: next.stepId,
    approvalId: call.approvalId,
    toolName: call.toolName,
    outcome: 'approved',
    userId,
    channel: next.channel,
    threadTs: next.threadTs,
    originalInput: call.input,
    ...(version.number > 0 ? { editedInput: version.input } : {}),
    version: version.number,
    inputHash: version.inputHash,
    ...(need > 1 ? { quorum: { have: Math.min(have, need), need } } : {}),
  };
  if (have < need) {
    return { ok: true, transition: { step: next, fromRevision: next.revision - 1, audit: [base] }, effect: { kind: 'counted', have, need } };
  }
  const decision: Decision = { outcome: 'approved', userId, at: now, version: version.number, inputHash: version.inputHash, approvedBy };
  next.decisions[call.approvalId] = decision;
  const final = { ...base, approvedBy, ...((call.versions?.length ?? 0) > 1 ? { versions: versionSummaries(call) } : {}) } as AuditEventInput;
  return { ok: true, transition: completeIfDone(next, [final], decision), effect: { kind: 'decided', decision } };
}

/**
 * Keeps on `next`'s copy of `version` the quorum the click counted under when a deploy raised it
 * past the one the card was posted with, so the card does not say "1 of 1" while the call waits.
 */
function recordQuorum(next: PendingStep, call: PendingCall, version: InputVersion, required: number): void {
  const stored = next.calls.find((candidate) => candidate.approvalId === call.approvalId)?.versions?.find((candidate) => candidate.number === version.number);
  if (!stored) return;
  if (required > stored.policy.required) stored.requiredNow = required;
  else delete stored.requiredNow;
}

function decide(step: PendingStep, call: PendingCall, request: CallActionRequest, context: CallActionContext, outcome: Omit<Decision, 'userId' | 'at'>): Judgement {
  const next = nextRevision(step);
  const decision: Decision = { ...outcome, userId: request.userId, at: context.now };
  next.decisions[call.approvalId] = decision;
  return { ok: true, transition: completeIfDone(next, [decisionEvent(step, call, decision)], decision), effect: { kind: 'decided', decision } };
}

/** A grant must be allowed by every policy that governs the call (a config that now forbids them, or asks for more approvers, wins). */
function grantRefusal(governing: GoverningPolicy, choice: GrantChoice): Refusal | undefined {
  const changed = (evaluation: PolicyEvaluation) => (evaluation === governing.stored ? '' : ` ${POLICY_CHANGED_TEXT}`);
  const forbidding = governingEvaluations(governing).find((evaluation) => evaluation.grants === 'forbidden');
  if (forbidding) return { code: 'grant-not-allowed', message: `The policy does not allow grants for this tool${changed(forbidding)}, so nothing changed.` };
  if (governing.required > 1) {
    const asking = governingEvaluations(governing).find((evaluation) => evaluation.required === governing.required) ?? governing.stored;
    return { code: 'grant-not-allowed', message: `This call needs ${governing.required} approvers${changed(asking)}, so later calls cannot be allowed ahead of time; nothing changed.` };
  }
  if (!(GRANT_HOURS as readonly number[]).includes(choice.hours)) return { code: 'grant-not-allowed', message: 'That duration is not offered, so nothing changed.' };
  return undefined;
}

/**
 * The policy a grant carries: the one later calls are judged by, the rule alone (a grant that kept
 * the ladder's fallback approvers would differ from every one of them, see `escalates`, and cover
 * nothing). After a deploy that changed the card's rule, later calls are evaluated by the config in
 * force, so the grant is its rule's, and only for a grantor that rule lets approve: a grant of the
 * card's rule would be confirmed, listed and audited, and cover nothing.
 */
function grantEvaluation({ step, governing, version, userId, context }: { step: PendingStep; governing: GoverningPolicy; version: InputVersion; userId: string; context: CallActionContext }): PolicyEvaluation | Refusal {
  if (governing.current === undefined) return withoutEscalation(version.policy);
  const evaluation = withoutEscalation(governing.current);
  if (approverEligibility({ evaluation, userId, requesterId: step.requesterId, groupMembers: context.groupMembers }).eligible) return evaluation;
  return {
    code: 'grant-not-allowed',
    message:
      'The approval policy changed since this card was posted, and the rule now in force does not let you approve these calls yourself, so you cannot allow later ones ahead of time; nothing changed. You can still approve this one without allowing more.',
  };
}

function buildGrant({
  step,
  call,
  version,
  userId,
  choice,
  context,
  evaluation,
  governing,
}: {
  step: PendingStep;
  call: PendingCall;
  version: InputVersion;
  userId: string;
  choice: GrantChoice;
  context: CallActionContext;
  evaluation: PolicyEvaluation;
  governing: GoverningPolicy;
}): Grant {
  const identicalOnly = governingEvaluations(governing).some((policy) => policy.grants === 'identicalArguments');
  return {
    grantId: context.newGrantId(),
    teamId: step.teamId,
    channel: step.channel,
    scope: choice.scope,
    ...(choice.scope === 'thread' ? { threadTs: step.threadTs } : {}),
    toolName: call.toolName,
    identicalArgumentsOnly: choice.identicalArgumentsOnly || identicalOnly,
    input: version.input,
    evaluation,
    ...(call.definitionFingerprint === undefined ? {} : { definitionFingerprint: call.definitionFingerprint }),
    grantedBy: userId,
    createdAt: context.now,
    expiresAt: context.now + choice.hours * 60 * 60 * 1000,
  };
}

function staleVersion(current: InputVersion): { ok: false; refusal: Refusal } {
  return refusal('stale', staleVersionText(current));
}

/** Why an action on a card older than `current` changed nothing; a form such a card would open is refused with it too. */
export function staleVersionText(current: InputVersion): string {
  const by = current.editedBy ? ` by <@${current.editedBy}>` : '';
  return `The input changed since you looked: it was edited${by} and is now version ${current.number + 1}. Check the card again; nothing changed.`;
}

function withReason(outcome: Omit<Decision, 'userId' | 'at'>, reason: string | undefined): Omit<Decision, 'userId' | 'at'> {
  return reason ? { ...outcome, reason } : outcome;
}

/** Every version of a call's input, for the audit record of the approval that decides it. */
export function versionSummaries(call: PendingCall): InputVersionSummary[] {
  const versions = call.versions ?? [];
  return versions.map((version, index) => ({
    version: version.number,
    inputHash: version.inputHash,
    input: version.input,
    ...(version.editedBy ? { editedBy: version.editedBy } : {}),
    at: version.at,
    ...(index > 0 ? { changes: describeChanges(diffInputs(versions[index - 1]!.input, version.input)) } : {}),
  }));
}

export function alreadyDecidedText(decision: Decision): string {
  switch (decision.outcome) {
    case 'approved':
      return `Already ${decision.version ? 'edited and approved' : 'approved'} by ${deciderText(decision.userId)}, so nothing changed.`;
    case 'denied':
      return `Already denied by ${deciderText(decision.userId)}, so nothing changed.`;
    case 'superseded':
      return `This call was closed because ${deciderText(decision.userId)} sent a newer message, so nothing changed.`;
    case 'answered':
      return `Already answered by ${deciderText(decision.userId)}, so nothing changed.`;
    case 'expired':
      return 'This request expired before anyone decided, so nothing changed.';
  }
}
