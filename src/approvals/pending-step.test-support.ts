import { randomUUID } from 'node:crypto';
import type { ApproverSpec } from '../config/policy-config-schema.js';
import { inputHash, modelVersion } from './input-version.js';
import { PENDING_STEP_SCHEMA_VERSION, type Decision, type PendingCall, type PendingStep } from './pending-step.js';
import type { PolicyEvaluation } from './policy/evaluate-policy.js';

export const TEAM = 'T0TEAM';
export const CHANNEL = 'C0OPS';
export const REQUESTER = 'U0ALICE';
export const CREATED_AT = 1_700_000_000_000;

/** A policy evaluation: anyone in the channel but the requester, one approval, unless overridden. */
export function evaluation(overrides: Partial<PolicyEvaluation> & { approvers?: ApproverSpec[] } = {}): PolicyEvaluation {
  return {
    rule: { index: 0 },
    needsApproval: true,
    approvers: [{ kind: 'channel' }],
    required: 1,
    allowSelfApproval: false,
    expiryMs: 86_400_000,
    onExpiry: 'stop',
    autoApprove: 'allowed',
    grants: 'allowed',
    ...overrides,
  };
}

export interface CallSpec {
  approvalId: string;
  input?: unknown;
  policy?: PolicyEvaluation;
  kind?: 'approval' | 'question';
}

/** A pending step as `buildPendingStep` makes it: each approval call has the model's version. */
export function makeStep(calls: Array<string | CallSpec>, overrides: Partial<PendingStep> = {}): PendingStep {
  const threadTs = overrides.threadTs ?? '1700000000.000100';
  return {
    schemaVersion: PENDING_STEP_SCHEMA_VERSION,
    stepId: `step${randomUUID().replaceAll('-', '')}`,
    threadKey: `${TEAM}:${CHANNEL}:${threadTs}`,
    teamId: TEAM,
    channel: CHANNEL,
    threadTs,
    requesterId: REQUESTER,
    createdAt: CREATED_AT,
    calls: calls.map((spec, index) => makeCall(typeof spec === 'string' ? { approvalId: spec } : spec, index)),
    decisions: {},
    phase: 'pending',
    revision: 0,
    ...overrides,
  };
}

function makeCall(spec: CallSpec, index: number): PendingCall {
  const input = spec.input ?? { service: 'api', namespace: 'staging' };
  if (spec.kind === 'question') {
    return { kind: 'question', approvalId: spec.approvalId, toolCallId: `call_${index}`, toolName: 'ask_user', description: 'Ask the requester', input };
  }
  const policy = spec.policy ?? evaluation();
  return {
    kind: 'approval',
    approvalId: spec.approvalId,
    toolCallId: `call_${index}`,
    toolName: 'restart_service',
    description: 'Restart a service',
    input,
    policy,
    versions: [modelVersion({ input, policy, at: CREATED_AT })],
  };
}

/** The step a paused turn becomes, with each call's decision (an approval signs version 0 unless edited). */
export function decidedStep(requests: ReadonlyArray<{ approvalId: string; toolCallId: string; toolName: string; input: unknown }>, decisions: Record<string, Omit<Decision, 'at'>>, edits: Record<string, unknown> = {}): PendingStep {
  const calls = requests.map((request) => {
    const versions = [modelVersion({ input: request.input, policy: evaluation(), at: 1 })];
    const edited = edits[request.approvalId];
    if (edited !== undefined) versions.push({ ...modelVersion({ input: edited, policy: evaluation(), at: 1 }), number: 1, editedBy: 'UBOB' });
    return { ...request, description: '', policy: evaluation(), versions };
  });
  const signed = Object.fromEntries(
    Object.entries(decisions).map(([approvalId, decision]) => {
      if (decision.outcome !== 'approved') return [approvalId, { ...decision, at: 1 }];
      const version = calls.find((call) => call.approvalId === approvalId)!.versions.at(-1)!;
      return [approvalId, { ...decision, at: 1, version: version.number, inputHash: inputHash(version.input), approvedBy: [decision.userId] }];
    }),
  );
  return { stepId: 's1', calls, decisions: signed } as unknown as PendingStep;
}
