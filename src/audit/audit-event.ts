import type { DecisionOutcome } from '../approvals/pending-step.js';

/**
 * One line of the audit trail: who asked for, decided, was refused, or ran what, and when. Events
 * are facts about the past, so they carry copies of the inputs rather than references to state that
 * expires (steps, grants).
 */
export type AuditEvent =
  | ApprovalRequestedEvent
  | DecisionEvent
  | InputEditedEvent
  | ActionRefusedEvent
  | UnauthorizedAttemptEvent
  | ExpiredEvent
  | EscalatedEvent
  | GrantEvent
  | AutoApprovedEvent
  | ToolStartedEvent
  | ToolExecutedEvent;

export type AuditEventType = AuditEvent['type'];

/** An event as a caller hands it over: `at` defaults to the time of the append. */
export type AuditEventInput = AuditEvent extends infer EVENT
  ? EVENT extends AuditEvent
    ? Omit<EVENT, 'at'> & { at?: number }
    : never
  : never;

/** An event read back: `id` is the stream entry id, which orders events and is unique per stream. */
export type StoredAuditEvent = AuditEvent & { id: string };

interface AuditEventCommon {
  /** Epoch milliseconds. */
  at: number;
  /** Slack workspace, when known; one bot can serve several. */
  teamId?: string;
}

export interface ApprovalRequestedEvent extends AuditEventCommon {
  type: 'approval-requested';
  stepId: string;
  approvalId: string;
  toolName: string;
  /** The model's input, exactly as proposed (secrets redacted). */
  input: unknown;
  requesterId: string;
  channel: string;
  threadTs: string;
  /** Who may decide, as configured (a user group, a list of users), for the reader's context. */
  approvers?: string;
  /** Epoch milliseconds. */
  expiresAt?: number;
}

export interface DecisionEvent extends AuditEventCommon {
  type: 'decision';
  stepId: string;
  approvalId: string;
  toolName: string;
  outcome: DecisionOutcome;
  userId: string;
  /**
   * Where the step's card was posted (its thread), so a decision is read without joining it to its
   * `approval-requested` by `stepId`; absent in records written before it was recorded.
   */
  channel?: string;
  threadTs?: string;
  originalInput: unknown;
  /** Present when the approver changed the arguments: this is what ran, not `originalInput`. */
  editedInput?: unknown;
  reason?: string;
  /**
   * For an answered question (`ask_user`): what the person answered, which the model acts on
   * (secrets redacted, as inputs are).
   */
  answer?: unknown;
  /** For calls that need several approvers: approvals so far, counting this one, and how many are needed. */
  quorum?: { have: number; need: number };
  /** For an approval: the input version it signs, and that version's hash. */
  version?: number;
  inputHash?: string;
  /** On the approval that decides the call: whose approvals counted. */
  approvedBy?: string[];
  /** On the approval that decides a call a human edited: every version, and which one runs (`version`). */
  versions?: InputVersionSummary[];
}

export interface InputVersionSummary {
  version: number;
  inputHash: string;
  input: unknown;
  /** Absent for the model's version. */
  editedBy?: string;
  /** Epoch milliseconds. */
  at: number;
  /** Against the version before, e.g. `namespace: "prod" → "staging"`. */
  changes?: string[];
}

/** A human wrote a new version of a call's input; earlier approvals stop counting. */
export interface InputEditedEvent extends AuditEventCommon {
  type: 'input-edited';
  stepId: string;
  approvalId: string;
  toolName: string;
  userId: string;
  /** Where the step's card was posted, as on `DecisionEvent`; absent in records written before it was recorded. */
  channel?: string;
  threadTs?: string;
  version: number;
  inputHash: string;
  input: unknown;
  changes: string[];
}

/**
 * An action the bot refused (not allowed, too late, a stale card, another workspace…). Nothing
 * changed; the record exists so an auditor sees attempts as well as decisions.
 */
export interface ActionRefusedEvent extends AuditEventCommon {
  type: 'action-refused';
  stepId?: string;
  approvalId?: string;
  toolName?: string;
  grantId?: string;
  /**
   * Where it was tried (the step's, grant's or thread's channel), when known: with `teamId` it puts
   * the record in that channel's shard; without, it goes to the first shard's.
   */
  channel?: string;
  userId: string;
  /** approve, deny, edit, grant, answer, retry, revoke… */
  action: string;
  code: string;
  reason: string;
}

/** Written by versions before `action-refused` existed; still read. */
export interface UnauthorizedAttemptEvent extends AuditEventCommon {
  type: 'unauthorized-attempt';
  stepId: string;
  approvalId: string;
  toolName: string;
  userId: string;
  /** What they tried: approve, deny, edit, answer… */
  action: string;
  reason: string;
}

export interface ExpiredEvent extends AuditEventCommon {
  type: 'expired';
  stepId: string;
  approvalId: string;
  toolName: string;
}

/** A hop of a rule's escalation ladder: the approvers were reminded and/or fallback approvers added. */
export interface EscalatedEvent extends AuditEventCommon {
  type: 'escalated';
  stepId: string;
  approvalId: string;
  toolName: string;
  /** The hop, 1-based; the card calls it stage `hop + 1` (stage 1 is the request itself). */
  hop: number;
  hops: number;
  reminded: boolean;
  /** Approvers added by this hop: user ids and `group:S…`. */
  addedApprovers: string[];
}

export interface GrantEvent extends AuditEventCommon {
  type: 'grant-created' | 'grant-revoked' | 'grant-used';
  grantId: string;
  toolName: string;
  scope: 'thread' | 'channel';
  channel: string;
  threadTs?: string;
  /**
   * Who created or revoked the grant, or (`grant-used`) used it by asking the bot: the person whose
   * request the turn ran for, whose call the grant let through without a card.
   */
  userId: string;
  /** Who gave the grant (its approval carried forward); absent in records written before it was recorded. */
  grantedBy?: string;
  /** Epoch milliseconds. */
  expiresAt: number;
  identicalArgumentsOnly: boolean;
}

export interface AutoApprovedEvent extends AuditEventCommon {
  type: 'auto-approved';
  toolName: string;
  channel: string;
  threadTs: string;
  input: unknown;
  /** `channel`: a grant or channel policy allowed it; `global`: the tool needs no approval anywhere; `schedule`: the scheduled turn's own `autoApprove` list. */
  mode: 'channel' | 'global' | 'schedule';
  grantId?: string;
  /** For `schedule`: which schedule. */
  schedule?: string;
  /** Whose request the turn ran for (a person, or `schedule:<name>`); absent in records written before it was recorded. */
  requesterId?: string;
}

/** Why a call may run: its countersignature. Written with the marker, just before the call starts. */
export type ExecutionBasis =
  | { kind: 'approval'; stepId: string; approvalId: string; version: number; inputHash: string; approvedBy: string[] }
  | { kind: 'grant'; grantId: string; grantedBy: string }
  | { kind: 'auto-approve'; mode: 'channel' | 'global' | 'schedule'; schedule?: string }
  | { kind: 'no-approval-needed' };

export interface ToolStartedEvent extends AuditEventCommon {
  type: 'tool-started';
  toolName: string;
  toolCallId: string;
  channel: string;
  threadTs: string;
  /** What runs (secrets redacted). */
  input: unknown;
  inputHash: string;
  basis: ExecutionBasis;
}

/** A started call's outcome: it returned (`ok`, `error`), or its process stopped while it ran (`interrupted`). */
export type ToolExecutedEvent = ToolReturnedEvent | ToolInterruptedEvent;

interface ToolOutcomeCommon extends AuditEventCommon {
  type: 'tool-executed';
  toolName: string;
  toolCallId: string;
  channel: string;
  threadTs: string;
}

export interface ToolReturnedEvent extends ToolOutcomeCommon {
  status: 'ok' | 'error';
  /** For commands; `null` when the process was killed by a signal. */
  exitCode?: number | null;
  durationMs: number;
  error?: string;
}

/**
 * The process running the call stopped (a crash, a kill) after its `tool-started`: the call may
 * or may not have completed, and how long it ran is not known. Written by the process that takes
 * the thread over, when it closes the call in the history; the call is never run again.
 */
export interface ToolInterruptedEvent extends ToolOutcomeCommon {
  status: 'interrupted';
  error: string;
}
