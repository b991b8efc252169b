import { createHash } from 'node:crypto';
import type { Approval, InputVersion, PendingCall, PendingStep } from './pending-step.js';
import { decisionOf } from './pending-step.js';
import type { PolicyEvaluation } from './policy/evaluate-policy.js';

/** JSON with object keys sorted, so `{a, b}` and `{b, a}` are the same arguments. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value ?? null, (_key, inner: unknown) =>
    inner && typeof inner === 'object' && !Array.isArray(inner)
      ? Object.fromEntries(Object.entries(inner as Record<string, unknown>).sort(([left], [right]) => (left < right ? -1 : left > right ? 1 : 0)))
      : inner,
  );
}

/**
 * What an approval signs: a hash of the canonical input. Two inputs that differ in any value have
 * different hashes, so an approval can only ever count for exactly the input its giver saw.
 */
export function inputHash(input: unknown): string {
  return createHash('sha256').update(canonicalJson(input)).digest('base64url');
}

/** Version 0 of a call: the model's input under the policy evaluated when it was proposed. */
export function modelVersion({ input, policy, at }: { input: unknown; policy: PolicyEvaluation; at: number }): InputVersion {
  return { number: 0, input, inputHash: inputHash(input), at, policy };
}

/** The version people are asked to approve now: the newest. */
export function currentVersion(call: PendingCall): InputVersion | undefined {
  return call.versions?.at(-1);
}

export function versionNumbered(call: PendingCall, number: number): InputVersion | undefined {
  return call.versions?.find((version) => version.number === number);
}

/** Approvals of one version, each person once (the first of theirs counts). */
export function approvalsOf(step: PendingStep, call: PendingCall, version: number): Approval[] {
  const seen = new Set<string>();
  return (step.approvals?.[call.approvalId] ?? []).filter((approval) => {
    if (approval.version !== version || seen.has(approval.userId)) return false;
    seen.add(approval.userId);
    return true;
  });
}

/**
 * The version an approved call runs with: the one its quorum approved. Undefined when the call was
 * not approved, or when the record does not hold together (then nothing may run).
 */
export function approvedVersion(step: PendingStep, call: PendingCall): InputVersion | undefined {
  const decision = decisionOf(step, call.approvalId);
  if (decision?.outcome !== 'approved' || decision.version === undefined) return undefined;
  const version = versionNumbered(call, decision.version);
  return version && version.inputHash === decision.inputHash && inputHash(version.input) === version.inputHash ? version : undefined;
}
