import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { parseConfigFile } from '../../config/config-file.js';
import type { ThreadMessenger } from '../../conversation/thread-messenger.js';
import { createMemoryStore } from '../../store/memory-store.js';
import { newThreadState } from '../../store/thread-state.js';
import { createExpirySweeper } from '../expiry-sweeper.js';
import { CHANNEL, CREATED_AT, makeStep, TEAM } from '../pending-step.test-support.js';
import { evaluatePolicy } from '../policy/evaluate-policy.js';
import type { PendingStep } from '../pending-step.js';
import type { PolicyConfig } from '../../config/policy-config-schema.js';
import { recheckApprovals } from '../recheck-approvals.js';
import { applyCallAction, type CallAction } from './call-action.js';

/**
 * A deploy that shortens the `expiry` of the rule a card waits under (24h → 15m) reaches the card,
 * as "a tightened policy reaches waiting cards" (README): approvers, quorum and self-approval of the
 * config in force apply to it, and so does its expiry, at the click, at an edit and at resume. A
 * request two hours old is past the deadline the config in force sets for it, and a click past it
 * is refused as expired and closes the step (`expireNow`), as its stored deadline would have.
 */
const rule = (expiry: string) =>
  parseConfigFile(`policy:\n  rules:\n    - name: prod restarts\n      tools: [restart_service]\n      approvers: [UBOB]\n      expiry: ${expiry}\n`, 'c.yml').policy;
const input = { service: 'worker', namespace: 'prod' };
const card = evaluatePolicy({ policy: rule('24h'), toolName: 'restart_service', channel: CHANNEL, input });
const after = rule('15m');
const TWO_HOURS_LATER = CREATED_AT + 2 * 60 * 60_000;
const here = { teamId: TEAM, channel: CHANNEL, membership: 'member' as const };
const inForce = (policy: PolicyConfig, of: unknown) => evaluatePolicy({ policy, toolName: 'restart_service', channel: CHANNEL, input: of });

function act(step: PendingStep, action: CallAction | { kind: 'edit'; input: unknown }, policy: PolicyConfig = after) {
  const full: CallAction =
    action.kind === 'edit' && !('policy' in action)
      ? { kind: 'edit', fromVersion: 0, input: action.input, submittedInput: action.input, policy: inForce(policy, action.input) }
      : (action as CallAction);
  return applyCallAction(
    step,
    { stepId: step.stepId, approvalId: 'a1', userId: 'UBOB', origin: here, action: full },
    { now: TWO_HOURS_LATER, groupMembers: new Map(), newGrantId: () => 'g1', currentPolicy: inForce(policy, input) },
  );
}

const posted = () => makeStep([{ approvalId: 'a1', input, policy: card }], { expiresAt: CREATED_AT + card.expiryMs });

describe('a deploy that shortens the expiry of the rule a card waits under', () => {
  it('Approve: the request is two hours old under a rule whose requests expire after 15 minutes', () => {
    const result = act(posted(), { kind: 'approve', version: 0 });
    expect(result.ok ? `recorded: ${result.effect.kind === 'decided' ? result.effect.decision.outcome : result.effect.kind}` : result.refusal.code, 'a request past the expiry in force was approved').toBe('expired');
  });

  it('an edit two hours in is refused: the request itself is past the expiry in force', () => {
    // Not `edit-past-expiry`, whose text says the input as it is can still be approved: it cannot.
    const result = act(posted(), { kind: 'edit', input: { service: 'api', namespace: 'prod' } });
    expect(result.ok ? 'recorded' : result.refusal.code).toBe('expired');
  });

  it('an edit to an input whose rule in force expires sooner is refused as past that expiry', () => {
    // The deploy changed the card's rule (so the edit keeps it, as the stricter of the two) and
    // added a prod rule with a 15-minute expiry: the edited input is past it, the card's is not.
    const deployed = parseConfigFile(
      `policy:
  rules:
    - name: prod restarts
      tools: [restart_service]
      input: [{ field: namespace, equals: prod }]
      approvers: [UBOB]
      expiry: 15m
    - name: restarts
      tools: [restart_service]
      approvers: [UBOB, UCAROL]
      expiry: 24h
`,
      'c.yml',
    ).policy;
    const staging = { service: 'worker', namespace: 'staging' };
    const stagingCard = evaluatePolicy({ policy: rule('24h'), toolName: 'restart_service', channel: CHANNEL, input: staging });
    const step = makeStep([{ approvalId: 'a1', input: staging, policy: stagingCard }], { expiresAt: CREATED_AT + stagingCard.expiryMs });
    const result = applyCallAction(
      step,
      { stepId: step.stepId, approvalId: 'a1', userId: 'UBOB', origin: here, action: { kind: 'edit', fromVersion: 0, input, submittedInput: input, policy: inForce(deployed, input) } },
      { now: TWO_HOURS_LATER, groupMembers: new Map(), newGrantId: () => 'g1', currentPolicy: inForce(deployed, staging) },
    );
    expect(result.ok ? 'recorded' : result.refusal.code, 'an edit past the expiry in force for the edited input was recorded').toBe('edit-past-expiry');
    expect(result.ok ? '' : result.refusal.message).toContain('requests expire 15m after they are made');
  });

  it('control: a deploy that lengthens the expiry buys the card no time', () => {
    const short = evaluatePolicy({ policy: rule('15m'), toolName: 'restart_service', channel: CHANNEL, input });
    const step = makeStep([{ approvalId: 'a1', input, policy: short }], { expiresAt: CREATED_AT + short.expiryMs });
    const result = act(step, { kind: 'approve', version: 0 }, rule('24h'));
    expect(result.ok ? 'recorded' : result.refusal.code).toBe('expired');
  });

  it('control: a click before the expiry in force is recorded', () => {
    const step = posted();
    const result = applyCallAction(
      step,
      { stepId: step.stepId, approvalId: 'a1', userId: 'UBOB', origin: here, action: { kind: 'approve', version: 0 } },
      { now: CREATED_AT + 10 * 60_000, groupMembers: new Map(), newGrantId: () => 'g1', currentPolicy: inForce(after, input) },
    );
    expect(result.ok ? 'recorded' : result.refusal.code).toBe('recorded');
  });

  it('at resume, an approval given after the expiry in force no longer holds', async () => {
    // Approved two hours in under the old config (a replica still on it), resumed under the new one.
    const approved = act(posted(), { kind: 'approve', version: 0 }, rule('24h'));
    if (!approved.ok) throw new Error(approved.refusal.message);
    const result = await recheckApprovals({
      step: approved.transition.step,
      resolveGroups: async () => new Map(),
      currentEvaluation: async ({ input: of }) => inForce(after, of),
      now: TWO_HOURS_LATER + 1_000,
    });
    expect(result.revoked, 'the call ran on an approval given after the expiry in force').toEqual([
      { approvalId: 'a1', userId: 'UBOB', reason: expect.stringContaining('approved after the request expired under the approval policy now in force') },
    ]);
  });

  it('the click that finds it expired closes the step as expired (expireNow), as the sweep would have', async () => {
    const store = createMemoryStore();
    const step = posted();
    const token = (await store.tryLock(step.threadKey, 60_000))!;
    await store.createStep({ step, thread: { ...newThreadState(step, CREATED_AT), pendingStepId: step.stepId }, ttlMs: 86_400_000, audit: [], fence: { threadKey: step.threadKey, token } });
    const messenger = { postMention: async () => {}, updateStepCard: async () => {}, updateStepCopy: async () => {} } as unknown as ThreadMessenger;
    const worker = { submit: async () => {}, pickUp: async () => false, startPickUp: async () => false, room: () => 0, idle: async () => {}, queueing: { mode: 'hand-off' as const, lockTtlMs: 60_000 }, claimTaken: <T>(_threadKey: string, claim: T) => claim, drainClaimed: async () => {} };
    const sweeper = createExpirySweeper({ store, messenger, worker, logger: pino({ level: 'silent' }), now: () => TWO_HOURS_LATER, currentEvaluation: async ({ input: of }) => inForce(after, of) });
    await sweeper.expireNow(step.stepId);
    const stored = await store.getStep(step.stepId);
    expect({ phase: stored?.phase, outcome: stored?.decisions.a1?.outcome }, 'the step past the expiry in force stayed open').toEqual({ phase: 'complete', outcome: 'expired' });
  });
});
