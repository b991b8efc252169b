import { describe, expect, it } from 'vitest';
import { parseConfigFile } from '../../src/config/config-file.js';
import { buildPendingStep } from '../../src/conversation/build-pending-step.js';
import { buildApprovalCard } from '../../src/slack/blocks/approval-card.js';
import { newThreadState } from '../../src/store/thread-state.js';
import { CHANNEL, CREATED_AT, TEAM } from '../../src/approvals/pending-step.test-support.js';
import { escalateTransition } from '../../src/approvals/transitions/escalate.js';

/**
 * README: "an escalation hop that would now come at or after the expiry is dropped from the card and
 * never made" and "expiry stays the last step". The step's expiry is the earliest of its calls'
 * (here the prod call's 10m), but the ladder's times come from the staging rule (5m, 20m): the edit
 * path drops a `nextAt` at or past the expiry (`withDeadlines`), `buildPendingStep` and
 * `escalateTransition` do not, so the card promises "next: escalates to @leads at <20m>" on a
 * request that expires at 10m, and the hop never comes.
 */
const policy = parseConfigFile(
  `
policy:
  rules:
    - name: prod restarts
      tools: [restart_service]
      input: [{ field: namespace, equals: prod }]
      approvers: [U0SRELEAD]
      expiry: 10m
    - name: staging restarts
      tools: [restart_service]
      approvers: [U0STAGEOWNER]
      expiry: 1h
      escalation: [{ after: 5m, remind: true }, { after: 20m, addApprovers: ["group:S0LEADS"] }]
`,
  'countersign.yml',
).policy;

async function twoCallStep() {
  return buildPendingStep({
    thread: newThreadState({ teamId: TEAM, channel: CHANNEL, threadTs: '1700000000.000100' }, CREATED_AT),
    requesterId: 'U0ALICE',
    requests: [
      { kind: 'approval' as const, approvalId: 'a1', toolCallId: 'call_0', toolName: 'restart_service', input: { service: 'api', namespace: 'staging' } },
      { kind: 'approval' as const, approvalId: 'a2', toolCallId: 'call_1', toolName: 'restart_service', input: { service: 'db', namespace: 'prod' } },
    ],
    policy,
    definitionOf: () => undefined,
    stepId: 'step1',
    now: CREATED_AT,
  });
}

const summaryOf = (card: ReturnType<typeof buildApprovalCard>) => JSON.stringify(card.blocks[1]);

describe('the card of a step whose ladder runs past its expiry', () => {
  it('does not promise a hop due after the request expires', async () => {
    const step = await twoCallStep();
    expect(step.expiresAt).toBe(CREATED_AT + 10 * 60_000);
    // The reminder hop at 5m comes before the expiry and is made.
    const hop = escalateTransition(step, { now: CREATED_AT + 6 * 60_000 });
    expect(hop).toBeDefined();
    const after = hop!.transition.step;
    // The next hop (20m) can never come: the sweep refuses it at or past the expiry (10m).
    expect(escalateTransition(after, { now: CREATED_AT + 20 * 60_000 })).toBeUndefined();
    expect(summaryOf(buildApprovalCard({ step: after }))).not.toContain('next: escalates');
  });

  it('keeps no time for a hop at or past the expiry, so nothing schedules it', async () => {
    const step = await twoCallStep();
    // The first hop (5m) comes before the expiry (10m): timed.
    expect(step.escalation?.nextAt).toBe(CREATED_AT + 5 * 60_000);
    // The one after it (20m) never comes: the hop ends the ladder, and the sweep takes it off the schedule.
    const hopped = escalateTransition(step, { now: CREATED_AT + 6 * 60_000 })!.transition.step.escalation;
    expect(hopped?.done).toBe(1);
    expect(hopped?.nextAt).toBeUndefined();
    // A step whose first hop is already past its expiry starts with none.
    const late = await buildPendingStep({
      thread: newThreadState({ teamId: TEAM, channel: CHANNEL, threadTs: '1700000000.000200' }, CREATED_AT),
      requesterId: 'U0ALICE',
      requests: [
        { kind: 'approval' as const, approvalId: 'b1', toolCallId: 'call_0', toolName: 'restart_service', input: { service: 'api', namespace: 'staging' } },
        { kind: 'approval' as const, approvalId: 'b2', toolCallId: 'call_1', toolName: 'restart_service', input: { service: 'db', namespace: 'prod' } },
      ],
      policy: parseConfigFile(
        `
policy:
  rules:
    - name: prod restarts
      tools: [restart_service]
      input: [{ field: namespace, equals: prod }]
      approvers: [U0SRELEAD]
      expiry: 10m
    - name: staging restarts
      tools: [restart_service]
      approvers: [U0STAGEOWNER]
      expiry: 1h
      escalation: [{ after: 10m, addApprovers: ["group:S0LEADS"] }]
`,
        'countersign.yml',
      ).policy,
      definitionOf: () => undefined,
      stepId: 'step2',
      now: CREATED_AT,
    });
    expect(late.expiresAt).toBe(CREATED_AT + 10 * 60_000);
    expect(late.escalation?.done).toBe(0);
    expect(late.escalation?.nextAt).toBeUndefined();
    expect(summaryOf(buildApprovalCard({ step: late }))).not.toContain('next:');
  });
});
