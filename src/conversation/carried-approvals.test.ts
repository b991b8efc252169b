import type { ModelMessage } from 'ai';
import { describe, expect, it } from 'vitest';
import { approvedCallsHistory } from '../agent/approved-history.test-support.js';
import { inputHash } from '../approvals/input-version.js';
import type { PendingStep } from '../approvals/pending-step.js';
import { evaluation, makeStep } from '../approvals/pending-step.test-support.js';
import type { GroupMembers } from '../approvals/policy/approver-eligibility.js';
import type { PolicyEvaluation } from '../approvals/policy/evaluate-policy.js';
import type { CarriedApproval } from '../store/thread-state.js';
import { judgeCarriedApprovals, withWithdrawals } from './carried-approvals.js';

const INPUT = { service: 'api', namespace: 'prod' };
const SRE = evaluation({ approvers: [{ kind: 'group', groupId: 'S0SRE' }] });

/** A resumed step whose one call Bob (in @sre) approved, and the approval a failed turn carried for it. */
function resumedStep(overrides: Partial<PendingStep> = {}) {
  const base = makeStep([{ approvalId: 'a1', input: INPUT, policy: SRE }], { phase: 'resumed', ...overrides });
  const step: PendingStep = { ...base, decisions: { a1: { outcome: 'approved', userId: 'U0BOB', at: 1, version: 0, inputHash: inputHash(INPUT), approvedBy: ['U0BOB'] } } };
  const carried: CarriedApproval = { toolCallId: 'call_0', toolName: 'restart_service', stepId: step.stepId, approvalId: 'a1', version: 0, inputHash: inputHash(INPUT), approvedBy: ['U0BOB'] };
  return { step, carried };
}

function judge(options: { step: PendingStep | undefined; carried: CarriedApproval; sre?: string[] | 'unreadable'; inForce?: PolicyEvaluation; hookInForce?: string }) {
  const { step, carried, sre = ['U0BOB'], inForce = SRE, hookInForce } = options;
  return judgeCarriedApprovals({
    carried: [carried],
    threadKey: makeStep([]).threadKey,
    getStep: async (stepId) => (stepId === step?.stepId ? step : undefined),
    resolveGroups: async (): Promise<GroupMembers> => (sre === 'unreadable' ? new Map() : new Map([['S0SRE', new Set(sre)]])),
    currentEvaluation: async () => inForce,
    hookInForce,
    now: 2,
  });
}

describe('judgeCarriedApprovals (Try again after a turn that failed before an approved call started)', () => {
  it('gives the run from the stored step, with the version its approvers signed', async () => {
    const { step, carried } = resumedStep();
    const judgement = await judge({ step, carried });
    expect(judgement).toMatchObject({ kind: 'judged', withdrawn: [] });
    if (judgement.kind !== 'judged') return;
    expect([...judgement.runs.keys()]).toEqual(['call_0']);
    expect(judgement.runs.get('call_0')).toMatchObject({ toolName: 'restart_service', input: INPUT, basis: { kind: 'approval', stepId: step.stepId, approvalId: 'a1', approvedBy: ['U0BOB'] } });
  });

  it('withdraws an approval whose approver has left the approving group since, naming them', async () => {
    const { step, carried } = resumedStep();
    const judgement = await judge({ step, carried, sre: [] });
    expect(judgement).toMatchObject({ kind: 'judged', withdrawn: [{ userId: 'U0BOB', code: 'approval-revoked', told: expect.stringContaining('the approval by <@U0BOB> no longer holds') }] });
    expect(judgement.kind === 'judged' && judgement.runs.size).toBe(0);
  });

  it('withdraws an approval the policy now in force no longer allows (a deploy took the approver off the rule)', async () => {
    const { step, carried } = resumedStep();
    const judgement = await judge({ step, carried, inForce: evaluation({ approvers: [{ kind: 'user', userId: 'U0LEAD' }] }) });
    expect(judgement).toMatchObject({ kind: 'judged', withdrawn: [{ userId: 'U0BOB', code: 'approval-revoked' }] });
    expect(judgement.kind === 'judged' && judgement.runs.size).toBe(0);
  });

  it("withdraws the approval hook's approval once the policy now in force forbids automatic approval of the tool, by countersign", async () => {
    const { step: byBob, carried: bobs } = resumedStep();
    const hook = 'hook:staging-only';
    const step: PendingStep = { ...byBob, decisions: { a1: { ...byBob.decisions.a1!, userId: hook, approvedBy: [hook] } } };
    const carried: CarriedApproval = { ...bobs, approvedBy: [hook] };
    const holds = await judge({ step, carried, hookInForce: 'staging-only' });
    expect(holds.kind === 'judged' && [...holds.runs.keys()]).toEqual(['call_0']);
    const forbidden = await judge({ step, carried, hookInForce: 'staging-only', inForce: { ...SRE, autoApprove: 'forbidden' } });
    expect(forbidden).toMatchObject({
      kind: 'judged',
      withdrawn: [{ userId: hook, code: 'approval-revoked', told: expect.stringMatching(/^Not run: the approval by the policy hook staging-only no longer holds \(the policy rule forbids automatic approval.*This was an error, not a decision/) }],
    });
    expect(forbidden.kind === 'judged' && forbidden.runs.size).toBe(0);
  });

  it('does not bring back an approval whose step is no longer stored (its lifetime ran out)', async () => {
    const { carried } = resumedStep();
    const judgement = await judge({ step: undefined, carried });
    expect(judgement).toMatchObject({ kind: 'judged', withdrawn: [{ userId: 'countersign', code: 'approval-not-on-record', told: expect.stringContaining('This was an error, not a decision') }] });
    expect(judgement.kind === 'judged' && judgement.runs.size).toBe(0);
  });

  it('runs nothing the stored step does not say was approved, or that is not a resumed step of this thread', async () => {
    const { step, carried } = resumedStep();
    const expired = { ...step, decisions: { a1: { outcome: 'expired' as const, userId: 'countersign', at: 1 } } };
    const otherVersion = { ...carried, inputHash: inputHash({ service: 'payments', namespace: 'prod' }) };
    for (const [stored, held] of [
      [expired, carried],
      [step, otherVersion],
      [{ ...step, phase: 'complete' as const }, carried],
      [{ ...step, threadKey: 'T0TEAM:C0OTHER:1.0' }, carried],
    ] as const) {
      const judgement = await judge({ step: stored, carried: held });
      expect(judgement.kind === 'judged' && { runs: judgement.runs.size, withdrawn: judgement.withdrawn.map((each) => each.code) }).toEqual({ runs: 0, withdrawn: ['approval-not-on-record'] });
    }
  });

  it('decides nothing while Slack does not answer for the approving group', async () => {
    const { step, carried } = resumedStep();
    expect(await judge({ step, carried, sre: 'unreadable' })).toEqual({ kind: 'unchecked', groupIds: ['S0SRE'] });
  });
});

describe('withWithdrawals', () => {
  it('turns only the withdrawn approvals of the last tool message into denials that say why', () => {
    const history = approvedCallsHistory({ request: 'restart api and web', calls: [{ toolName: 'restart_service', input: INPUT }, { toolName: 'restart_service', input: { service: 'web', namespace: 'prod' } }] });
    const { carried } = resumedStep();
    const withdrawn = [{ approval: { ...carried, approvalId: 'a2' }, userId: 'U0BOB', code: 'approval-revoked' as const, reason: 'r', told: 'Declined by <@U0BOB>: gone' }];
    const last = withWithdrawals(history, withdrawn).at(-1) as Extract<ModelMessage, { role: 'tool' }>;
    expect(last.content).toEqual([
      { type: 'tool-approval-response', approvalId: 'a1', approved: true },
      { type: 'tool-approval-response', approvalId: 'a2', approved: false, reason: 'Declined by <@U0BOB>: gone' },
    ]);
    expect(history.at(-1)).toEqual({ role: 'tool', content: [expect.objectContaining({ approved: true }), expect.objectContaining({ approved: true })] });
  });
});
