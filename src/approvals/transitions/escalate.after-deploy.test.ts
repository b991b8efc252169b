import { describe, expect, it } from 'vitest';
import { parseConfigFile } from '../../config/config-file.js';
import { buildPendingStep } from '../../conversation/build-pending-step.js';
import { newThreadState } from '../../store/thread-state.js';
import { CHANNEL, CREATED_AT, TEAM } from '../pending-step.test-support.js';
import { evaluatePolicy } from '../policy/evaluate-policy.js';
import { applyCallAction } from './call-action.js';
import { escalateTransition } from './escalate.js';

const HOP_MS = 30 * 60_000;
const config = (extra: string) =>
  parseConfigFile(
    `
policy:
  rules:
    - name: staging restarts
      tools: [restart_service]
      approvers: [U0STAGEOWNER]
      escalation: [{ after: 30m, addApprovers: [U0LEAD] }]
${extra}`,
    'countersign.yml',
  ).policy;

describe('an escalation hop after a deploy that only retouched the ladder rule', () => {
  it('the fallback approver the hop just announced can approve (the ladder is the same in the config in force)', async () => {
    const before = config('');
    // The deploy adds a reminder to the rule; approvers and the ladder are unchanged.
    const after = config('      reminder: 10m\n');
    const input = { service: 'api', namespace: 'staging' };
    const step = await buildPendingStep({
      thread: newThreadState({ teamId: TEAM, channel: CHANNEL, threadTs: '1700000000.000100' }, CREATED_AT),
      requesterId: 'U0ALICE',
      requests: [{ kind: 'approval', approvalId: 'a1', toolCallId: 'call_0', toolName: 'restart_service', input }],
      policy: before,
      definitionOf: () => undefined,
      stepId: 'step1',
      now: CREATED_AT,
    });
    // The sweep (any replica, on the new release) makes the hop from the ladder the step stored: "<@U0LEAD> can now approve".
    const hop = escalateTransition(step, { now: CREATED_AT + HOP_MS });
    expect(hop?.stage?.addApprovers).toEqual([{ kind: 'user', userId: 'U0LEAD' }]);
    const escalated = hop!.transition.step;
    const currentPolicy = evaluatePolicy({ policy: after, toolName: 'restart_service', channel: CHANNEL, input });
    expect(currentPolicy.escalation).toEqual(step.calls[0]!.kind === 'approval' ? step.calls[0]!.policy!.escalation : undefined);
    const result = applyCallAction(
      escalated,
      { stepId: escalated.stepId, approvalId: 'a1', userId: 'U0LEAD', origin: { teamId: TEAM, channel: CHANNEL, membership: 'member' }, action: { kind: 'approve', version: 0 } },
      { now: CREATED_AT + HOP_MS + 60_000, groupMembers: new Map(), newGrantId: () => 'g1', currentPolicy },
    );
    expect(result.ok ? 'approved' : result.refusal.message).toBe('approved');
  });
});
