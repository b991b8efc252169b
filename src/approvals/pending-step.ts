import type { EscalationStage } from '../config/policy-config-schema.js';
import type { PolicyEvaluation } from './policy/evaluate-policy.js';

/**
 * A paused agent step: the tool calls the model made that wait for a human. One step is one card.
 * It is stored as data so any bot process can render it, decide on it and resume the turn.
 */
export const PENDING_STEP_SCHEMA_VERSION = 2;

export type DecisionOutcome = 'approved' | 'denied' | 'superseded' | 'answered' | 'expired';

export interface Decision {
  outcome: DecisionOutcome;
  /** Slack user id of whoever decided (for `superseded`, the author of the newer message). */
  userId: string;
  /** Epoch milliseconds. */
  at: number;
  reason?: string;
  /** For a question (`ask_user`): the human's validated answer, which becomes the tool result. */
  answer?: unknown;
  /** For `approved`: the input version that reached the quorum. That version, and no other, runs. */
  version?: number;
  /** For `approved`: the hash of that version's canonical input, as every counted approval signed it. */
  inputHash?: string;
  /** For `approved`: the people whose approvals of that version counted, in the order they came. */
  approvedBy?: string[];
}

/** One person's countersignature: of one input version, named by its hash. */
export interface Approval {
  userId: string;
  /** Epoch milliseconds. */
  at: number;
  version: number;
  inputHash: string;
}

/**
 * One version of a call's input. Version 0 is the model's proposal; each human edit adds the next.
 * Approvals name a version, so an edit never inherits approvals given to what it replaced.
 */
export interface InputVersion {
  number: number;
  /** After the tool's schema parsed it (defaults applied): what runs if this version is approved. */
  input: unknown;
  /** An edit as submitted, which the schema turned into `input`. */
  submittedInput?: unknown;
  inputHash: string;
  /** Who wrote this version; absent for the model's. */
  editedBy?: string;
  /** Epoch milliseconds. */
  at: number;
  /** The policy for this input: who may approve this version, and how many must. */
  policy: PolicyEvaluation;
  /**
   * The quorum the last click on this version counted under, when a deploy raised it past
   * `policy.required` (the config in force governs with it; see `governingPolicy`): the card shows
   * it. `policy` stays what the card was posted with, for that comparison.
   */
  requiredNow?: number;
}

export interface PendingCall {
  /**
   * `approval`: the bot runs the call once a human approves it. `question`: a human answers it
   * (`ask_user`) and the answer is the result. Absent means `approval`.
   */
  kind?: 'approval' | 'question';
  /** The AI SDK's approval id (`tool-approval-request.approvalId`); for a question, our own id. */
  approvalId: string;
  toolCallId: string;
  toolName: string;
  /** The tool's description as the model saw it, shown on the card. */
  description: string;
  /** The model's input, exactly as proposed. Untrusted. */
  input: unknown;
  /** What the policy said about the model's input when the call was proposed. */
  policy?: PolicyEvaluation;
  /** For approval calls: every version of the input, the model's first. */
  versions?: InputVersion[];
  /**
   * For approval calls: what the tool did when the card was built (`definitionFingerprintOf`). An
   * approval is for that tool: after a deploy that changed it, the call is not run. Absent in steps
   * stored before it was recorded, and for a tool this process did not have.
   */
  definitionFingerprint?: string;
}

/**
 * A copy of a step's card outside its thread: in a channel the rule names, or in a DM to an
 * approver. Clicks on it count as clicks in the thread; every change of the step is shown on it.
 */
export interface CardCopy {
  kind: 'channel' | 'dm';
  channel: string;
  ts: string;
  /** For a DM: the approver it was sent to. */
  userId?: string;
  /** A link to the copy, for the thread's card. */
  permalink?: string;
}

/** A policy rule by its place and name in `policy.rules`, or `defaults` when no rule covered the call. */
export type LadderRule = { index: number; name?: string; fingerprint?: string } | 'defaults';

/** A step's escalation ladder (its first call's that has one, as the card showed it) and how far it got. */
export interface StepEscalation {
  ladder: EscalationStage[];
  /**
   * The rule the ladder came from: its hops add approvers only to calls whose current version is
   * under this rule. Absent in steps stored before it was recorded (see `stepLadderRule`).
   */
  rule?: LadderRule;
  /** Hops made so far. */
  done: number;
  /** Epoch milliseconds of the next hop; absent after the last. */
  nextAt?: number;
}

export type StepPhase =
  /** Waiting for decisions. */
  | 'pending'
  /** Every call has a decision; the turn may resume. */
  | 'complete'
  /** A process claimed the resume; nothing else may resume it again. */
  | 'resumed'
  /** A newer human message closed the undecided calls. */
  | 'superseded';

export interface PendingStep {
  schemaVersion: typeof PENDING_STEP_SCHEMA_VERSION;
  stepId: string;
  threadKey: string;
  teamId: string;
  channel: string;
  threadTs: string;
  /** Slack user whose message started the turn. Fixed for the turn's life, whoever clicks. */
  requesterId: string;
  /**
   * People other than the requester who answered (or declined with a reason) the model's questions,
   * or denied its calls with a reason, earlier in the turn, before it asked for these calls: what
   * they wrote may be what is asked for, so a rule that forbids self-approval excludes them like the
   * requester (`turnInstigators`). Anyone in the channel answers a scheduled turn's questions, and
   * any approver may deny with a reason. Absent when nobody did.
   */
  instigatorIds?: string[];
  /** Epoch milliseconds. */
  createdAt: number;
  /** `ts` of the approval card, once posted. */
  cardTs?: string;
  /** A link to the card in the thread, for its copies elsewhere (outside the revision, like `cardTs`). */
  cardLink?: string;
  /** Copies of the card outside the thread, as they were posted (outside the revision, like `cardTs`). */
  copies?: CardCopy[];
  calls: PendingCall[];
  /** Keyed by approval id; a call without an entry is still pending. */
  decisions: Record<string, Decision>;
  /** Every approval given so far, of any version, keyed by approval id. */
  approvals?: Record<string, Approval[]>;
  /**
   * Epoch milliseconds: undecided calls expire then (the earliest of the calls' policies, counted
   * from `createdAt`). An edit under a rule with a shorter expiry brings it forward, never back.
   */
  expiresAt?: number;
  /** Epoch milliseconds: when to remind the approvers, if a policy asks for it (an edit may bring it forward too). */
  remindAt?: number;
  escalation?: StepEscalation;
  /**
   * Epoch milliseconds: until then the approval hook (`onApprovalRequest`) may still be deciding
   * this step's calls, so nobody else may act on them: App Home does not list them and clicks are
   * refused. Set when the step is created (only when the hook will be asked), removed by the hook's
   * last write. A process that stopped while its hook was deciding leaves it behind; past the
   * deadline (the hook's time limit) it is ignored, so the step never stays undecidable.
   */
  hookDecidingUntil?: number;
  phase: StepPhase;
  /**
   * W3C trace context of the turn that paused on this step: the decision, the wait for it and the
   * resumed turn (perhaps in another process, hours later) join that turn's trace.
   */
  traceparent?: string;
  /** The fencing token of the thread holder that claimed the resume (phase `resumed`). */
  resumedBy?: string;
  /** Bumped on every change; a change is written only over the revision it was computed from. */
  revision: number;
}

export function isQuestion(call: PendingCall): boolean {
  return call.kind === 'question';
}

export function undecidedCalls(step: PendingStep): PendingCall[] {
  return step.calls.filter((call) => !Object.hasOwn(step.decisions, call.approvalId));
}

/** `hasOwn`: an approval id such as "constructor" must not find Object.prototype members. */
export function decisionOf(step: PendingStep, approvalId: string): Decision | undefined {
  return Object.hasOwn(step.decisions, approvalId) ? step.decisions[approvalId] : undefined;
}

/** Whether the approval hook may still decide the step's calls at `now` (see `hookDecidingUntil`). */
export function hookIsDeciding(step: Pick<PendingStep, 'hookDecidingUntil'>, now: number): boolean {
  return step.hookDecidingUntil !== undefined && now < step.hookDecidingUntil;
}
