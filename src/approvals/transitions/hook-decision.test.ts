import { describe, expect, it } from 'vitest';
import { evaluation, makeStep } from '../pending-step.test-support.js';
import { approvedRunsFor } from '../../agent/approved-runs.js';
import { inputHash } from '../input-version.js';
import { recheckApprovals } from '../recheck-approvals.js';
import { applyCallAction } from './call-action.js';
import type { PendingStep } from '../pending-step.js';
import { hookDecisionRefusal, hookDecisionTransition, hookFinishedTransition, hookStartedTransition } from './hook-decision.js';

const NOW = 1_700_000_100_000;
const approve = { decision: 'approve' } as const;
// The version every call of `makeStep` opens with, which the hook is asked about.
const asked = { number: 0, inputHash: inputHash({ service: 'api', namespace: 'staging' }) };

describe('hookDecisionTransition', () => {
  it('approves a call by itself, even one that needs two approvers, as hook:<name>', () => {
    const step = makeStep([{ approvalId: 'a1', policy: evaluation({ required: 2 }) }, 'a2']);
    const transition = hookDecisionTransition(step, { approvalId: 'a1', asked, hookName: 'runbook', verdict: approve, now: NOW })!;
    expect(transition.step.decisions.a1).toMatchObject({ outcome: 'approved', userId: 'hook:runbook', approvedBy: ['hook:runbook'], version: 0 });
    expect(transition.step.phase).toBe('pending');
    expect(transition.completed).toBeUndefined();
    expect(transition.audit).toEqual([expect.objectContaining({ type: 'decision', outcome: 'approved', userId: 'hook:runbook', approvalId: 'a1', version: 0 })]);
    expect(step.decisions).toEqual({});

    const last = hookDecisionTransition(transition.step, { approvalId: 'a2', asked, hookName: 'runbook', verdict: { decision: 'deny', reason: 'freeze' }, now: NOW })!;
    expect(last.step.decisions.a2).toMatchObject({ outcome: 'denied', userId: 'hook:runbook', reason: 'freeze' });
    expect(last).toMatchObject({ completed: true, closed: true, fromRevision: 1, step: { phase: 'complete', revision: 2 } });
  });

  it('never approves under a rule that forbids automatic approval, but may deny there', () => {
    const step = makeStep([{ approvalId: 'a1', policy: evaluation({ autoApprove: 'forbidden' }) }]);
    expect(hookDecisionTransition(step, { approvalId: 'a1', asked, hookName: 'h', verdict: approve, now: NOW })).toBeUndefined();
    expect(hookDecisionTransition(step, { approvalId: 'a1', asked, hookName: 'h', verdict: { decision: 'deny', reason: 'no' }, now: NOW })?.step.decisions.a1?.outcome).toBe('denied');
  });

  it('changes nothing on a decided call, a closed step or a question', () => {
    const step = makeStep(['a1', { approvalId: 'q1', kind: 'question' }]);
    const clicked = applyCallAction(step, { stepId: step.stepId, approvalId: 'a1', userId: 'U0BOB', origin: { teamId: step.teamId, channel: step.channel, membership: 'member' }, action: { kind: 'deny' } }, { now: NOW, groupMembers: new Map(), newGrantId: () => 'g' });
    if (!clicked.ok) throw new Error(clicked.refusal.message);
    expect(hookDecisionTransition(clicked.transition.step, { approvalId: 'a1', asked, hookName: 'h', verdict: approve, now: NOW })).toBeUndefined();
    expect(hookDecisionTransition(step, { approvalId: 'q1', asked, hookName: 'h', verdict: approve, now: NOW })).toBeUndefined();
    expect(hookDecisionTransition({ ...step, phase: 'superseded' }, { approvalId: 'a1', asked, hookName: 'h', verdict: approve, now: NOW })).toBeUndefined();
  });

  it('is refused after the request expired, like a click at that moment (the README: approved "before the request expired")', () => {
    const expiresAt = NOW + 60_000;
    const step = makeStep(['a1'], { expiresAt });
    const click = applyCallAction(
      step,
      { stepId: step.stepId, approvalId: 'a1', userId: 'U0BOB', origin: { teamId: step.teamId, channel: step.channel, membership: 'member' }, action: { kind: 'approve', version: 0 } },
      { now: expiresAt + 20_000, groupMembers: new Map(), newGrantId: () => 'g' },
    );
    expect(click.ok).toBe(false);
    expect(hookDecisionTransition(step, { approvalId: 'a1', asked, hookName: 'slow-cab', verdict: approve, now: expiresAt + 20_000 })).toBeUndefined();
    expect(hookDecisionRefusal(step, { approvalId: 'a1', asked, verdict: approve, now: expiresAt })?.code).toBe('expired');
    expect(hookDecisionTransition(step, { approvalId: 'a1', asked, hookName: 'slow-cab', verdict: approve, now: expiresAt - 1 })).toBeDefined();
  });

  it('is refused after the expiry the config in force sets, like a click at that moment, though the step was created with a longer one', () => {
    const step = makeStep(['a1'], { expiresAt: NOW + 60 * 60_000 });
    // A deploy shortened the rule to 10 minutes from the request.
    const currentPolicy = evaluation({ expiryMs: 10 * 60_000 });
    const shortened = step.createdAt + 10 * 60_000;
    const click = applyCallAction(
      step,
      { stepId: step.stepId, approvalId: 'a1', userId: 'U0BOB', origin: { teamId: step.teamId, channel: step.channel, membership: 'member' }, action: { kind: 'approve', version: 0 } },
      { now: shortened, groupMembers: new Map(), newGrantId: () => 'g', currentPolicy },
    );
    expect(click.ok).toBe(false);
    expect(hookDecisionRefusal(step, { approvalId: 'a1', asked, verdict: approve, now: shortened, currentPolicy })?.code).toBe('expired');
    expect(hookDecisionTransition(step, { approvalId: 'a1', asked, hookName: 'h', verdict: approve, now: shortened - 1, currentPolicy })).toMatchObject({ deadline: shortened });
  });

  it("keeps people's hands off the step until the hook's last decision, and only until the mark's deadline", () => {
    const step = makeStep(['a1', 'a2'], { hookDecidingUntil: NOW + 7_000 });
    const bobApproves = (at: PendingStep, now: number) =>
      applyCallAction(
        at,
        { stepId: at.stepId, approvalId: 'a2', userId: 'U0BOB', origin: { teamId: at.teamId, channel: at.channel, membership: 'member' }, action: { kind: 'approve', version: 0 } },
        { now, groupMembers: new Map(), newGrantId: () => 'g' },
      );
    const refused = bobApproves(step, NOW);
    expect(refused.ok === false && refused.refusal).toEqual({ code: 'hook-deciding', message: 'A policy check is still running on this request, so nothing changed; try again in a moment.' });
    // A process that stopped mid-hook left the mark: past its deadline, it no longer stops anyone.
    expect(bobApproves(step, NOW + 7_000).ok).toBe(true);

    // Between two of the hook's decisions the step stays marked; its last decision removes the mark.
    const first = hookDecisionTransition(step, { approvalId: 'a1', asked, hookName: 'h', verdict: approve, now: NOW })!;
    expect(first.step.hookDecidingUntil).toBe(NOW + 7_000);
    expect(bobApproves(first.step, NOW).ok).toBe(false);
    const finished = hookDecisionTransition(step, { approvalId: 'a1', asked, hookName: 'h', verdict: approve, now: NOW, finished: true })!;
    expect(finished.step.hookDecidingUntil).toBeUndefined();
    expect(bobApproves(finished.step, NOW).ok).toBe(true);

    // The hook left everything to people (or timed out): a write of its own lets them act.
    const released = hookFinishedTransition(step)!;
    expect(released).toMatchObject({ fromRevision: step.revision, audit: [] });
    expect(released.step.hookDecidingUntil).toBeUndefined();
    expect(hookFinishedTransition(released.step)).toBeUndefined();
  });

  it('approves only the version it was asked about; its deny holds for an edited call, like a person\'s', () => {
    const step = makeStep(['a1'], { hookDecidingUntil: NOW - 1 });
    // Bob's edit does not count as his approval: only Carol may approve prod.
    const onlyCarol = evaluation({ rule: { index: 1, name: 'prod' }, approvers: [{ kind: 'user', userId: 'U0CAROL' }] as never });
    const edit = applyCallAction(
      step,
      {
        stepId: step.stepId,
        approvalId: 'a1',
        userId: 'U0BOB',
        origin: { teamId: step.teamId, channel: step.channel, membership: 'member' },
        action: { kind: 'edit', fromVersion: 0, input: { service: 'api', namespace: 'prod' }, submittedInput: { service: 'api', namespace: 'prod' }, policy: onlyCarol },
      },
      { now: NOW, groupMembers: new Map(), newGrantId: () => 'g' },
    );
    if (!edit.ok) throw new Error(edit.refusal.message);
    const edited = edit.transition.step;
    expect(hookDecisionRefusal(edited, { approvalId: 'a1', asked, verdict: approve, now: NOW })).toEqual({
      code: 'input-changed',
      reason: 'the input was edited by U0BOB while the hook was deciding (now version 2); the hook approved version 1',
    });
    expect(hookDecisionTransition(edited, { approvalId: 'a1', asked, hookName: 'h', verdict: approve, now: NOW })).toBeUndefined();
    // The same version number with another input is another input.
    expect(hookDecisionRefusal(step, { approvalId: 'a1', asked: { ...asked, inputHash: 'other' }, verdict: approve, now: NOW })?.code).toBe('input-changed');
    const deny = { decision: 'deny', reason: 'change freeze' } as const;
    expect(hookDecisionRefusal(edited, { approvalId: 'a1', asked, verdict: deny, now: NOW })).toBeUndefined();
    expect(hookDecisionTransition(edited, { approvalId: 'a1', asked, hookName: 'h', verdict: deny, now: NOW })?.step.decisions.a1).toMatchObject({ outcome: 'denied', reason: 'change freeze' });
  });

  it('is run at resume with the version and input it names, and not at all when the record does not match them', async () => {
    const step = makeStep(['a1']);
    const approved = hookDecisionTransition(step, { approvalId: 'a1', asked, hookName: 'h', verdict: approve, now: NOW })!.step;
    const recheck = (at: PendingStep) =>
      recheckApprovals({ step: { ...at, phase: 'resumed' }, resolveGroups: () => Promise.reject(new Error('a hook has no group')), currentEvaluation: async () => evaluation(), hookInForce: 'h', now: NOW });
    const kept = await recheck(approved);
    expect(kept.revoked).toEqual([]);
    expect([...approvedRunsFor(kept.step).values()].map((run) => run.input)).toEqual([{ service: 'api', namespace: 'staging' }]);

    const otherInput = { ...approved, decisions: { a1: { ...approved.decisions.a1!, inputHash: inputHash({ service: 'api', namespace: 'prod' }) } } };
    const revoked = await recheck(otherInput);
    expect(revoked.revoked).toEqual([expect.objectContaining({ approvalId: 'a1', userId: 'hook:h' })]);
    expect(approvedRunsFor(revoked.step).size).toBe(0);
  });

  it('marks the step again when the hook is asked, only later than it was and only while pending', () => {
    const step = makeStep(['a1'], { hookDecidingUntil: NOW });
    const started = hookStartedTransition(step, { until: NOW + 7_000 })!;
    expect(started).toMatchObject({ fromRevision: step.revision, audit: [], step: { hookDecidingUntil: NOW + 7_000, revision: step.revision + 1 } });
    expect(hookStartedTransition(started.step, { until: NOW + 7_000 })).toBeUndefined();
    expect(hookStartedTransition({ ...step, phase: 'superseded' }, { until: NOW + 7_000 })).toBeUndefined();
  });

  it('says why a decision that arrives for an already-decided call does not count', () => {
    const step = makeStep(['a1']);
    const clicked = applyCallAction(step, { stepId: step.stepId, approvalId: 'a1', userId: 'U0BOB', origin: { teamId: step.teamId, channel: step.channel, membership: 'member' }, action: { kind: 'approve', version: 0 } }, { now: NOW, groupMembers: new Map(), newGrantId: () => 'g' });
    if (!clicked.ok) throw new Error(clicked.refusal.message);
    expect(hookDecisionRefusal(clicked.transition.step, { approvalId: 'a1', asked, verdict: { decision: 'deny', reason: 'freeze' }, now: NOW })).toEqual({
      code: 'already-decided',
      reason: 'the call was already approved by U0BOB while the hook was deciding',
    });
  });
});
