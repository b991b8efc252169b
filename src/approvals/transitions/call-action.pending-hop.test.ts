import { describe, expect, it } from 'vitest';
import { parseConfigFile } from '../../config/config-file.js';
import { buildPendingStep } from '../../conversation/build-pending-step.js';
import { newThreadState } from '../../store/thread-state.js';
import { CHANNEL, CREATED_AT, TEAM } from '../pending-step.test-support.js';
import { evaluatePolicy } from '../policy/evaluate-policy.js';
import type { PendingStep } from '../pending-step.js';
import { applyCallAction } from './call-action.js';
import { escalateTransition } from './escalate.js';

const HOP_MS = 30 * 60_000;
const input = { service: 'worker', namespace: 'prod' };
const config = (rule: string) => parseConfigFile(`policy:\n  rules:\n    - name: prod restarts\n      tools: [restart_service]\n${rule}`, 'countersign.yml').policy;
// Posted when Bob was on call, with the lead as the fallback after 30 minutes.
const before = config('      approvers: [UBOB]\n      escalation: [{ after: 30m, addApprovers: [U0LEAD] }]\n');
// The deploy hands prod restarts to the lead outright: the common "promote the fallback" change.
const after = config('      approvers: [U0LEAD]\n');
const inForce = evaluatePolicy({ policy: after, toolName: 'restart_service', channel: CHANNEL, input });

async function postedCard(): Promise<PendingStep> {
  return buildPendingStep({
    thread: newThreadState({ teamId: TEAM, channel: CHANNEL, threadTs: '1700000000.000100' }, CREATED_AT),
    requesterId: 'U0ALICE',
    requests: [{ kind: 'approval', approvalId: 'a1', toolCallId: 'call_0', toolName: 'restart_service', input }],
    policy: before,
    definitionOf: () => undefined,
    stepId: 'step1',
    now: CREATED_AT,
  });
}
const act = (step: PendingStep, userId: string, now: number, action: { kind: 'approve'; version: number } | { kind: 'deny' }) =>
  applyCallAction(
    step,
    { stepId: step.stepId, approvalId: 'a1', userId, origin: { teamId: TEAM, channel: CHANNEL, membership: 'member' }, action },
    { now, groupMembers: new Map(), newGrantId: () => 'g1', currentPolicy: inForce },
  );
const approveBy = (step: PendingStep, userId: string, now: number) => act(step, userId, now, { kind: 'approve', version: 0 });

describe('a deploy that promotes the fallback approver while the card waits for its hop', () => {
  it('after the hop, the lead is an approver under both policies and his approval runs the call', async () => {
    const step = await postedCard();
    const escalated = escalateTransition(step, { now: CREATED_AT + HOP_MS })!.transition.step;
    const result = approveBy(escalated, 'U0LEAD', CREATED_AT + HOP_MS + 60_000);
    expect(result.ok && result.effect).toMatchObject({ kind: 'decided', decision: { outcome: 'approved', userId: 'U0LEAD' } });
  });

  it("Bob's approve before the hop is refused, not turned into closing the call as undecidable (the lead can approve it in 25 minutes)", async () => {
    const step = await postedCard();
    const click = approveBy(step, 'UBOB', CREATED_AT + 5 * 60_000);
    // Before the fix: closed by countersign, "nobody it names can approve this request now; ask again".
    expect(click.ok && click.effect.kind === 'decided' ? click.effect.decision : 'not closed').toBe('not closed');
    expect(click.ok ? 'recorded' : click.refusal.message).toContain('Only <@U0LEAD> can approve this under the approval policy now in force');
  });

  it("a passer-by's deny before the hop is refused and leaves the call open", async () => {
    const step = await postedCard();
    const click = act(step, 'U0CAROL', CREATED_AT + 5 * 60_000, { kind: 'deny' });
    expect(click.ok ? click.effect : 'refused').toBe('refused');
  });
});
