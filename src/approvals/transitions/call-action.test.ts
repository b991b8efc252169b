import { describe, expect, it } from 'vitest';
import { approvedVersion, inputHash } from '../input-version.js';
import type { PendingStep } from '../pending-step.js';
import { CHANNEL, CREATED_AT, evaluation, makeStep, REQUESTER, TEAM } from '../pending-step.test-support.js';
import { applyCallAction, type CallAction, type CallActionRequest, type CallActionResult } from './call-action.js';

const BOB = 'U0BOB';
const CAROL = 'U0CAROL';
const DAVE = 'U0DAVE';
const ONCALL = 'S0ONCALL';
const here = { teamId: TEAM, channel: CHANNEL, membership: 'member' as const };
const groupMembers = new Map([[ONCALL, new Set([BOB, CAROL])]]);

function act(step: PendingStep, userId: string, action: CallAction, options: { origin?: CallActionRequest['origin']; now?: number } = {}): CallActionResult {
  return applyCallAction(
    step,
    { stepId: step.stepId, approvalId: step.calls[0]!.approvalId, userId, origin: options.origin ?? here, action },
    { now: options.now ?? CREATED_AT + 1_000, groupMembers, newGrantId: () => 'grant1' },
  );
}

/** Applies an action that must succeed and returns the step as it would be stored. */
function apply(step: PendingStep, userId: string, action: CallAction): PendingStep {
  const result = act(step, userId, action);
  if (!result.ok) throw new Error(`refused: ${result.refusal.message}`);
  return result.transition.step;
}

function refusalOf(result: CallActionResult) {
  return result.ok ? undefined : result.refusal.code;
}

const quorumOfTwo = () => makeStep([{ approvalId: 'a1', input: { service: 'worker' }, policy: evaluation({ required: 2 }) }]);
const edit = (input: unknown, fromVersion = 0): CallAction => ({ kind: 'edit', fromVersion, input, submittedInput: input, policy: evaluation({ required: 2 }) });

describe('applyCallAction: an approval signs one exact input', () => {
  it('does not count an approval of the original towards an edited input (approve, then edit)', () => {
    let step = apply(quorumOfTwo(), BOB, { kind: 'approve', version: 0 });
    const edited = act(step, CAROL, edit({ service: 'payments-db' }));
    expect(edited).toMatchObject({ ok: true, effect: { kind: 'new-version', counted: true, have: 1, need: 2 } });
    step = (edited as Extract<CallActionResult, { ok: true }>).transition.step;
    expect(step.decisions.a1).toBeUndefined();
    // Bob approved "worker", not "payments-db": his approval does not make it 2 of 2.
    expect(refusalOf(act(step, BOB, { kind: 'approve', version: 0 }))).toBe('stale');
    step = apply(step, BOB, { kind: 'approve', version: 1 });
    expect(step.decisions.a1).toMatchObject({ outcome: 'approved', version: 1, approvedBy: [CAROL, BOB] });
    expect(approvedVersion(step, step.calls[0]!)?.input).toEqual({ service: 'payments-db' });
  });

  it('refuses an approval of a version the card no longer shows (edit, then approve the old card)', () => {
    const step = apply(quorumOfTwo(), BOB, edit({ service: 'safe-canary' }));
    const stale = act(step, CAROL, { kind: 'approve', version: 0 });
    expect(stale).toMatchObject({ ok: false, refusal: { code: 'stale' } });
    const decided = apply(step, CAROL, { kind: 'approve', version: 1 });
    expect(approvedVersion(decided, decided.calls[0]!)?.input).toEqual({ service: 'safe-canary' });
  });

  it('refuses an edit made from a version that is no longer current', () => {
    const step = apply(quorumOfTwo(), BOB, edit({ service: 'one' }));
    expect(refusalOf(act(step, CAROL, edit({ service: 'two' }, 0)))).toBe('stale');
  });

  it('records the hash of the approved input with every approval', () => {
    const step = apply(quorumOfTwo(), BOB, { kind: 'approve', version: 0 });
    expect(step.approvals?.a1).toEqual([{ userId: BOB, at: CREATED_AT + 1_000, version: 0, inputHash: inputHash({ service: 'worker' }) }]);
  });

  it('keeps a version an ineligible editor wrote, without counting their approval of it', () => {
    const prod = evaluation({ approvers: [{ kind: 'group', groupId: ONCALL }], required: 1 });
    const step = makeStep([{ approvalId: 'a1', input: { namespace: 'staging' } }]);
    const result = act(step, DAVE, { kind: 'edit', fromVersion: 0, input: { namespace: 'prod' }, submittedInput: { namespace: 'prod' }, policy: prod });
    expect(result).toMatchObject({ ok: true, effect: { kind: 'new-version', counted: false } });
    const next = (result as Extract<CallActionResult, { ok: true }>).transition.step;
    expect(refusalOf(act(next, DAVE, { kind: 'approve', version: 1 }))).toBe('not-eligible');
    expect(apply(next, BOB, { kind: 'approve', version: 1 }).decisions.a1?.outcome).toBe('approved');
  });
});

describe('applyCallAction: every action is authorised from the stored step', () => {
  it('refuses a grant on a call that needs two approvers, whatever the card offered', () => {
    const result = act(quorumOfTwo(), BOB, { kind: 'approve', version: 0, grant: { scope: 'channel', hours: 1, identicalArgumentsOnly: false } });
    expect(result).toMatchObject({ ok: false, refusal: { code: 'grant-not-allowed' } });
  });

  it('creates a grant only together with the approval that decides a one-approver call', () => {
    const result = act(makeStep(['a1']), BOB, { kind: 'approve', version: 0, grant: { scope: 'thread', hours: 4, identicalArgumentsOnly: false } });
    expect(result).toMatchObject({ ok: true, transition: { grant: { grantedBy: BOB, scope: 'thread', expiresAt: CREATED_AT + 1_000 + 4 * 3_600_000 } } });
    expect((result as Extract<CallActionResult, { ok: true }>).transition.audit.map((event) => event.type)).toEqual(['decision', 'grant-created']);
  });

  it('binds the grant to the tool as the card recorded it, so a deploy that changes what the tool does ends it', () => {
    const step = makeStep(['a1']);
    step.calls[0]!.definitionFingerprint = 'fp-rollout-restart';
    const result = act(step, BOB, { kind: 'approve', version: 0, grant: { scope: 'channel', hours: 1, identicalArgumentsOnly: false } });
    expect(result).toMatchObject({ ok: true, transition: { grant: { definitionFingerprint: 'fp-rollout-restart' } } });
  });

  it('lets only the requester answer or decline a question', () => {
    const question = makeStep([{ approvalId: 'q1', kind: 'question', input: { question: 'Which region?' } }]);
    expect(refusalOf(act(question, BOB, { kind: 'deny' }))).toBe('not-requester');
    expect(refusalOf(act(question, BOB, { kind: 'answer', answer: 'eu' }))).toBe('not-requester');
    expect(apply(question, REQUESTER, { kind: 'deny' }).decisions.q1).toMatchObject({ outcome: 'denied', userId: REQUESTER });
  });

  it('takes only one of its options as the answer to a question that offers them; declining stays open', () => {
    const question = makeStep([{ approvalId: 'q1', kind: 'question', input: { question: 'Restart in which namespace?', options: ['staging', 'dev'] } }]);
    expect(act(question, REQUESTER, { kind: 'answer', answer: 'prod' })).toMatchObject({ ok: false, refusal: { code: 'not-an-option' } });
    expect(refusalOf(act(question, REQUESTER, { kind: 'answer', answer: { answer: 'staging' } }))).toBe('not-an-option');
    expect(apply(question, REQUESTER, { kind: 'answer', answer: 'dev' }).decisions.q1).toMatchObject({ outcome: 'answered', answer: 'dev' });
    expect(apply(question, REQUESTER, { kind: 'deny' }).decisions.q1).toMatchObject({ outcome: 'denied' });
  });

  it("lets anyone in a scheduled turn's channel answer or decline its question, from the thread; the requester stays the schedule", () => {
    const copies = [{ kind: 'channel' as const, channel: 'C0ELSEWHERE', ts: '1.2' }];
    const question = makeStep([{ approvalId: 'q1', kind: 'question', input: { question: 'Which namespace?' } }], { requesterId: 'schedule:heartbeat', copies });
    const answered = act(question, BOB, { kind: 'answer', answer: 'prod' });
    expect(answered).toMatchObject({ ok: true, effect: { kind: 'decided', decision: { outcome: 'answered', userId: BOB, answer: 'prod' } } });
    expect((answered as Extract<CallActionResult, { ok: true }>).transition.step.requesterId).toBe('schedule:heartbeat');
    expect(apply(question, CAROL, { kind: 'deny' }).decisions.q1).toMatchObject({ outcome: 'denied', userId: CAROL });
    // A copy elsewhere is not the channel: its members are not the schedule's channel's.
    const elsewhere = act(question, BOB, { kind: 'answer', answer: 'prod' }, { origin: { ...here, channel: 'C0ELSEWHERE' } });
    expect(elsewhere).toMatchObject({ ok: false, refusal: { code: 'not-requester', message: `Only people in <#${CHANNEL}> can answer this question, from the thread there, so nothing changed.` } });
  });

  it('refuses any action once the step has expired, even before a sweep closed it', () => {
    const step = makeStep(['a1'], { expiresAt: CREATED_AT + 60_000 });
    expect(refusalOf(act(step, BOB, { kind: 'approve', version: 0 }, { now: CREATED_AT + 60_000 }))).toBe('expired');
    expect(refusalOf(act(step, BOB, { kind: 'approve', version: 0 }, { now: CREATED_AT + 59_999 }))).toBeUndefined();
  });

  it('refuses clicks from another workspace or another channel', () => {
    const step = makeStep(['a1']);
    expect(refusalOf(act(step, BOB, { kind: 'approve', version: 0 }, { origin: { ...here, teamId: 'T0OTHER' } }))).toBe('wrong-workspace');
    expect(refusalOf(act(step, BOB, { kind: 'approve', version: 0 }, { origin: { ...here, channel: 'C0ELSEWHERE' } }))).toBe('wrong-channel');
  });

  it('refuses every action by someone outside the organisation, or whose membership could not be checked', () => {
    const step = makeStep(['a1']);
    for (const action of [{ kind: 'approve', version: 0 }, { kind: 'deny' }] satisfies CallAction[]) {
      expect(refusalOf(act(step, BOB, action, { origin: { ...here, membership: 'external' } }))).toBe('external-user');
      expect(refusalOf(act(step, BOB, action, { origin: { ...here, membership: 'unverified' } }))).toBe('membership-unverified');
    }
    const question = makeStep([{ approvalId: 'q1', kind: 'question', input: { question: 'Which region?' } }]);
    expect(refusalOf(act(question, REQUESTER, { kind: 'answer', answer: 'prod' }, { origin: { ...here, membership: 'external' } }))).toBe('external-user');
  });

  it('refuses self-approval, but lets the requester withdraw their own request', () => {
    const step = makeStep(['a1']);
    expect(refusalOf(act(step, REQUESTER, { kind: 'approve', version: 0 }))).toBe('self-approval');
    expect(apply(step, REQUESTER, { kind: 'deny' }).decisions.a1?.outcome).toBe('denied');
  });

  it('counts each person once towards a quorum', () => {
    const step = apply(quorumOfTwo(), BOB, { kind: 'approve', version: 0 });
    expect(refusalOf(act(step, BOB, { kind: 'approve', version: 0 }))).toBe('already-approved');
  });

  it('never changes the step it was given', () => {
    const step = quorumOfTwo();
    const before = structuredClone(step);
    act(step, BOB, edit({ service: 'x' }));
    act(step, BOB, { kind: 'approve', version: 0 });
    expect(step).toEqual(before);
  });
});

describe('applyCallAction: an edit under a rule with a shorter expiry', () => {
  const MINUTE = 60_000;
  const staging = evaluation({ expiryMs: 60 * MINUTE, reminderMs: 30 * MINUTE });
  const prod = evaluation({ approvers: [{ kind: 'user', userId: CAROL }], expiryMs: 10 * MINUTE, reminderMs: 5 * MINUTE });
  const stagingStep = (overrides: Partial<PendingStep> = {}) =>
    makeStep([{ approvalId: 'a1', input: { namespace: 'staging' }, policy: staging }], { expiresAt: CREATED_AT + 60 * MINUTE, remindAt: CREATED_AT + 30 * MINUTE, ...overrides });
  const toProd = (policy = prod): CallAction => ({ kind: 'edit', fromVersion: 0, input: { namespace: 'prod' }, submittedInput: { namespace: 'prod' }, policy });

  it("takes the stricter rule's deadlines, counted from the request, and has the schedules moved with them", () => {
    const result = act(stagingStep(), BOB, toProd(), { now: CREATED_AT + 2 * MINUTE });
    expect(result).toMatchObject({ ok: true, transition: { rescheduled: { expiry: true, reminder: true }, step: { expiresAt: CREATED_AT + 10 * MINUTE, remindAt: CREATED_AT + 5 * MINUTE } } });
    const edited = (result as Extract<CallActionResult, { ok: true }>).transition.step;
    expect(refusalOf(act(edited, CAROL, { kind: 'approve', version: 1 }, { now: CREATED_AT + 10 * MINUTE }))).toBe('expired');
    expect(refusalOf(act(edited, CAROL, { kind: 'approve', version: 1 }, { now: CREATED_AT + 10 * MINUTE - 1 }))).toBeUndefined();
  });

  it('never lengthens the deadline: an edit back under the laxer rule keeps the stricter one', () => {
    const edited = act(stagingStep(), BOB, toProd(), { now: CREATED_AT + 2 * MINUTE });
    const back = act((edited as Extract<CallActionResult, { ok: true }>).transition.step, CAROL, { kind: 'edit', fromVersion: 1, input: { namespace: 'staging' }, submittedInput: { namespace: 'staging' }, policy: staging }, { now: CREATED_AT + 3 * MINUTE });
    expect(back).toMatchObject({ ok: true, transition: { step: { expiresAt: CREATED_AT + 10 * MINUTE, remindAt: CREATED_AT + 5 * MINUTE } } });
    expect((back as Extract<CallActionResult, { ok: true }>).transition.rescheduled).toBeUndefined();
  });

  it("refuses an edit once the stricter rule's expiry has passed, and changes nothing", () => {
    const result = act(stagingStep(), BOB, toProd(), { now: CREATED_AT + 10 * MINUTE });
    expect(result).toMatchObject({ ok: false, refusal: { code: 'edit-past-expiry', message: expect.stringContaining('requests expire 10m after they are made, and this one was made 10m ago') } });
  });

  it('leaves a reminder that has come due where it was, so nobody is reminded twice', () => {
    const result = act(stagingStep({ remindAt: CREATED_AT + MINUTE }), BOB, toProd(), { now: CREATED_AT + 2 * MINUTE });
    expect(result).toMatchObject({ ok: true, transition: { rescheduled: { expiry: true, reminder: false }, step: { remindAt: CREATED_AT + MINUTE } } });
  });

  it('stops promising an escalation hop that would come at or after the new expiry', () => {
    const ladder = [{ afterMs: 20 * MINUTE, remind: true, addApprovers: [] }];
    const step = stagingStep({ escalation: { ladder, done: 0, nextAt: CREATED_AT + 20 * MINUTE } });
    const result = act(step, BOB, toProd(), { now: CREATED_AT + 2 * MINUTE });
    expect((result as Extract<CallActionResult, { ok: true }>).transition.step.escalation).toEqual({ ladder, done: 0 });
  });
});
