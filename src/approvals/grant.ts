import type { GrantEvent } from '../audit/audit-event.js';
import { inputHash } from './input-version.js';
import { approverEligibility, type GroupMembers } from './policy/approver-eligibility.js';
import type { PolicyEvaluation } from './policy/evaluate-policy.js';
import { escalates } from './policy/escalates.js';

export { canonicalJson } from './input-version.js';

/**
 * "Approve and allow for this thread / channel for N hours": later matching calls run without a
 * card. The scope is explicit and bounded (peers' "always allow" leaks across places and never
 * ends), the grant keeps the policy it was given under, and it is listed, revocable and audited.
 */
export interface Grant {
  grantId: string;
  teamId: string;
  channel: string;
  scope: 'thread' | 'channel';
  /** For a thread grant: the thread it covers. */
  threadTs?: string;
  toolName: string;
  /** Only calls whose input is exactly `input` (compared as canonical JSON). */
  identicalArgumentsOnly: boolean;
  input?: unknown;
  /**
   * The policy for the approved call: a later call under another rule, or a stricter one, is not
   * covered. Its rule is matched by `rule.fingerprint` (content), so a deploy that edits, inserts or
   * reorders rules cannot hand the grant to a rule its grantor never approved under.
   */
  evaluation: PolicyEvaluation;
  /**
   * What the tool did when the card was posted (`definitionFingerprintOf`): a deploy that makes the
   * tool do something else ends the grant, as it voids a waiting approval. Absent in grants given on
   * cards posted before it was recorded: those are judged as then, by tool name and rule.
   */
  definitionFingerprint?: string;
  grantedBy: string;
  /** Epoch milliseconds. */
  createdAt: number;
  expiresAt: number;
}

/** Offered durations; anything longer should be a policy rule (`approval: never`), not a grant. */
export const GRANT_HOURS = [1, 4, 8, 24] as const;

/** What the approver chose in the grant form. */
export interface GrantChoice {
  scope: 'thread' | 'channel';
  hours: number;
  identicalArgumentsOnly: boolean;
}

export interface GrantCandidate {
  toolName: string;
  channel: string;
  threadTs: string;
  input: unknown;
  /** The policy for this call's input, now. */
  evaluation: PolicyEvaluation;
  /** What the tool does now (`definitionFingerprintOf`). */
  definitionFingerprint?: string;
  requesterId: string;
  /** Whose answers or deny reasons in the turn led to this call (see `PendingStep.instigatorIds`): their grants are their own approval. */
  instigatorIds?: readonly string[];
  /** Members of the groups `evaluation` names, to check the grantor could approve this call. */
  groupMembers: GroupMembers;
  /**
   * Whether a person is in the call's channel now, for a `channel` approver: a grantor who left it
   * could no longer see or click its cards. False when that could not be read, so an outage at Slack
   * does not open the gate.
   */
  inChannel: (userId: string) => boolean;
  now: number;
}

/**
 * Whether a grant stands in for a human on this call. A grant is one person's approval carried
 * forward, so it is never wider than that approval could be now: the same rule, a rule that needs
 * one approver, a grantor who may approve this call (so never their own request, nor a call their
 * answer or deny reason earlier in the turn led to, when the rule forbids self-approval, nor one only
 * the channel's people may approve once they left it), and the scope, time and arguments the grant names.
 */
export function grantCovers(grant: Grant, call: GrantCandidate): boolean {
  if (grant.expiresAt <= call.now || grant.toolName !== call.toolName || grant.channel !== call.channel) return false;
  if (grant.scope === 'thread' && grant.threadTs !== call.threadTs) return false;
  if (grant.definitionFingerprint !== undefined && grant.definitionFingerprint !== call.definitionFingerprint) return false;
  const { evaluation } = call;
  if (evaluation.grants === 'forbidden' || evaluation.required > 1 || grant.evaluation.required > 1) return false;
  if (!sameRule(grant.evaluation, evaluation) || escalates({ before: grant.evaluation, after: evaluation })) return false;
  const identical = inputHash(grant.input) === inputHash(call.input);
  if ((grant.identicalArgumentsOnly || evaluation.grants === 'identicalArguments') && !identical) return false;
  return approverEligibility({
    evaluation,
    userId: grant.grantedBy,
    requesterId: call.requesterId,
    instigatorIds: call.instigatorIds,
    groupMembers: call.groupMembers,
    inThreadChannel: call.inChannel(grant.grantedBy),
  }).eligible;
}

/**
 * The same rule by content, wherever it now stands in the file: an index or a name can point at
 * another rule after a deploy. A grant stored before grants recorded the fingerprint has none and
 * covers nothing, since which rule it was given under can no longer be told.
 */
function sameRule(grant: PolicyEvaluation, call: PolicyEvaluation): boolean {
  if (grant.rule === undefined || call.rule === undefined) return grant.rule === call.rule;
  return grant.rule.fingerprint !== undefined && grant.rule.fingerprint === call.rule.fingerprint;
}

/** The audit entry for something that happened to a grant; `userId` is who did it (for `grant-used`, whose request it let through). */
export function grantAuditEvent(type: GrantEvent['type'], grant: Grant, userId: string): Omit<GrantEvent, 'at'> {
  return {
    type,
    teamId: grant.teamId,
    grantId: grant.grantId,
    toolName: grant.toolName,
    scope: grant.scope,
    channel: grant.channel,
    ...(grant.threadTs ? { threadTs: grant.threadTs } : {}),
    userId,
    grantedBy: grant.grantedBy,
    expiresAt: grant.expiresAt,
    identicalArgumentsOnly: grant.identicalArgumentsOnly,
  };
}
