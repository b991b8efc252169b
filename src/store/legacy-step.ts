import { inputHash, modelVersion } from '../approvals/input-version.js';
import { PENDING_STEP_SCHEMA_VERSION, type Approval, type Decision, type PendingCall, type PendingStep, type StepPhase } from '../approvals/pending-step.js';
import type { PolicyEvaluation } from '../approvals/policy/evaluate-policy.js';

/** A decision as version 1 stored it: an edit was a field of the decision, not a version. */
type LegacyDecision = Omit<Decision, 'version' | 'inputHash' | 'approvedBy'> & { edit?: { input: unknown; submittedInput: unknown } };

/** What version 1 kept about a call before any policy existed: anyone in the channel could decide. */
const CHANNEL_POLICY: PolicyEvaluation = {
  rule: undefined,
  needsApproval: true,
  approvers: [{ kind: 'channel' }],
  required: 1,
  allowSelfApproval: true,
  expiryMs: 24 * 60 * 60 * 1000,
  onExpiry: 'stop',
  autoApprove: 'allowed',
  grants: 'allowed',
};

/**
 * Reads a step written by version 1 (a hash of `meta`, `d:<id>` and `a:<id>:<user>` fields), so
 * cards waiting during an upgrade still work: an edit becomes version 1 of its call, approvals
 * become approvals of the version they were given to.
 */
export function legacyStepFromHash(record: Record<string, string>): PendingStep | undefined {
  if (record.meta === undefined) return undefined;
  const meta = JSON.parse(record.meta) as Omit<PendingStep, 'decisions' | 'approvals' | 'phase' | 'revision' | 'cardTs' | 'schemaVersion'> & { schemaVersion: number };
  if (meta.schemaVersion !== 1) return undefined;
  const legacyDecisions: Record<string, LegacyDecision> = {};
  const legacyApprovals: Record<string, LegacyDecision[]> = {};
  for (const [field, value] of Object.entries(record)) {
    if (field.startsWith('d:')) legacyDecisions[field.slice(2)] = JSON.parse(value) as LegacyDecision;
    if (field.startsWith('a:')) (legacyApprovals[field.slice(2, field.lastIndexOf(':'))] ??= []).push(JSON.parse(value) as LegacyDecision);
  }
  const decisions: Record<string, Decision> = {};
  const approvals: Record<string, Approval[]> = {};
  const calls: PendingCall[] = meta.calls.map((call) => {
    const legacy = legacyDecisions[call.approvalId];
    if (call.kind === 'question') {
      if (legacy) decisions[call.approvalId] = withoutEdit(legacy);
      return call;
    }
    const policy = call.policy ?? CHANNEL_POLICY;
    const versions = [modelVersion({ input: call.input, policy, at: meta.createdAt })];
    const partial = (legacyApprovals[call.approvalId] ?? []).sort((left, right) => left.at - right.at);
    approvals[call.approvalId] = partial.map((approval) => ({ userId: approval.userId, at: approval.at, version: 0, inputHash: versions[0]!.inputHash }));
    if (legacy?.outcome === 'approved' && legacy.edit) {
      const edited = { number: 1, input: legacy.edit.input, submittedInput: legacy.edit.submittedInput, inputHash: inputHash(legacy.edit.input), editedBy: legacy.userId, at: legacy.at, policy };
      versions.push(edited);
      decisions[call.approvalId] = { ...withoutEdit(legacy), version: 1, inputHash: edited.inputHash, approvedBy: [legacy.userId] };
    } else if (legacy?.outcome === 'approved') {
      const approvedBy = [...new Set([...partial.map((approval) => approval.userId), legacy.userId])];
      decisions[call.approvalId] = { ...legacy, version: 0, inputHash: versions[0]!.inputHash, approvedBy };
    } else if (legacy) {
      decisions[call.approvalId] = withoutEdit(legacy);
    }
    return { ...call, policy, versions };
  });
  return {
    ...meta,
    schemaVersion: PENDING_STEP_SCHEMA_VERSION,
    calls,
    decisions,
    ...(Object.values(approvals).some((list) => list.length > 0) ? { approvals } : {}),
    phase: record.phase as StepPhase,
    revision: Number(record.revision ?? 0),
    ...(record.card === undefined ? {} : { cardTs: record.card }),
  };
}

function withoutEdit({ edit: _edit, ...decision }: LegacyDecision): Decision {
  return decision;
}
