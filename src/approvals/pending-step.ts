import type { PolicyEvaluation } from './policy/evaluate-policy.js';

/**
 * A paused agent step: the tool calls the model made that wait for a human. One step is one card.
 * It is stored as data so any bot process can render it, decide on it and resume the turn.
 */
export const PENDING_STEP_SCHEMA_VERSION = 1;

export type DecisionOutcome = 'approved' | 'denied' | 'superseded' | 'answered' | 'expired';

export interface Decision {
  outcome: DecisionOutcome;
  /** Slack user id of whoever decided (for `superseded`, the author of the newer message). */
  userId: string;
  /** Epoch milliseconds. */
  at: number;
  reason?: string;
  /** Set when the approver changed the arguments: the call runs with `input`, never the original. */
  edit?: CallEdit;
  /** For a question (`ask_user`): the human's validated answer, which becomes the tool result. */
  answer?: unknown;
}

export interface CallEdit {
  /** The edited input after the tool's schema parsed it (defaults applied): what runs. */
  input: unknown;
  /** The edited input as submitted, which the schema turns into `input`. */
  submittedInput: unknown;
}

export interface PendingCall {
  /**
   * `approval`: the bot runs the call once a human approves it. `question`: a human answers it
   * (`ask_user`) and the answer is the result. Absent means `approval` (older records).
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
  /** What the policy said when the call was proposed: every later click is judged by this. */
  policy?: PolicyEvaluation;
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
  /** Slack user whose message started the turn. */
  requesterId: string;
  /** Epoch milliseconds. */
  createdAt: number;
  /** `ts` of the approval card, once posted. */
  cardTs?: string;
  calls: PendingCall[];
  /** Keyed by approval id; a call without an entry is still pending. */
  decisions: Record<string, Decision>;
  /** Approvals so far of calls that need several approvers (quorum), keyed by approval id. */
  approvals?: Record<string, Decision[]>;
  /** Epoch milliseconds: undecided calls expire then (the earliest of the calls' policies). */
  expiresAt?: number;
  /** Epoch milliseconds: when to remind the approvers, if a policy asks for it. */
  remindAt?: number;
  phase: StepPhase;
  /** Bumped on every decision so a card update can tell it rendered stale state. */
  revision: number;
}

export function isQuestion(call: PendingCall): boolean {
  return call.kind === 'question';
}

export function undecidedCalls(step: PendingStep): PendingCall[] {
  return step.calls.filter((call) => !Object.hasOwn(step.decisions, call.approvalId));
}
