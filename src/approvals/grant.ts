import type { GrantEvent } from '../audit/audit-event.js';
import type { PolicyEvaluation } from './policy/evaluate-policy.js';
import { escalates } from './policy/escalates.js';

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
  /** The policy for the approved call: a later call needing other or more approvers is not covered. */
  evaluation: PolicyEvaluation;
  grantedBy: string;
  /** Epoch milliseconds. */
  createdAt: number;
  expiresAt: number;
}

export function grantCovers(
  grant: Grant,
  call: { toolName: string; channel: string; threadTs: string; input: unknown; evaluation: PolicyEvaluation; now: number },
): boolean {
  if (grant.expiresAt <= call.now || grant.toolName !== call.toolName || grant.channel !== call.channel) return false;
  if (grant.scope === 'thread' && grant.threadTs !== call.threadTs) return false;
  if (call.evaluation.grants === 'forbidden') return false;
  const identical = canonicalJson(grant.input) === canonicalJson(call.input);
  if ((grant.identicalArgumentsOnly || call.evaluation.grants === 'identicalArguments') && !identical) return false;
  return !escalates({ before: grant.evaluation, after: call.evaluation });
}

/** JSON with object keys sorted, so `{a, b}` and `{b, a}` are the same arguments. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value ?? null, (_key, inner: unknown) =>
    inner && typeof inner === 'object' && !Array.isArray(inner)
      ? Object.fromEntries(Object.entries(inner as Record<string, unknown>).sort(([left], [right]) => (left < right ? -1 : left > right ? 1 : 0)))
      : inner,
  );
}

/** The audit entry for something that happened to a grant; `userId` is who did it. */
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
    expiresAt: grant.expiresAt,
    identicalArgumentsOnly: grant.identicalArgumentsOnly,
  };
}
