import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import type { ApprovalHookFunction } from '../approvals/approval-hook.js';
import { CREATED_AT, makeStep } from '../approvals/pending-step.test-support.js';
import type { PendingStep } from '../approvals/pending-step.js';
import { applyCallAction } from '../approvals/transitions/call-action.js';
import type { StepTransition } from '../approvals/transitions/step-transition.js';
import { createMemoryAuditLog } from '../audit/memory-audit-log.js';
import { createApprovalHookConsultation, hookDecidingMark, hookTimeLimit } from './consult-approval-hook.js';
import type { PhaseDependencies } from './phase-dependencies.js';
import type { TurnScope } from './turn-scope.js';

const NOW = CREATED_AT + 1_000;

/** The step as stored: read and written over its revision, as the Redis store does. */
function storeHolding(initial: PendingStep) {
  let stored = structuredClone(initial);
  return {
    current: () => stored,
    set: (step: PendingStep) => (stored = structuredClone(step)),
    getStep: async () => structuredClone(stored),
    commitStep: async (transition: StepTransition) => {
      if (transition.fromRevision !== stored.revision) return { result: 'conflict' as const };
      stored = structuredClone(transition.step);
      return { result: 'committed' as const };
    },
  };
}

function consultation(store: ReturnType<typeof storeHolding>, decide: ApprovalHookFunction, timeoutMs = 5_000) {
  const warnings: Array<Record<string, unknown>> = [];
  const logger = pino({ level: 'silent' });
  logger.warn = ((fields: Record<string, unknown>) => warnings.push(fields)) as never;
  const audit = createMemoryAuditLog({ logger });
  const consult = createApprovalHookConsultation({
    store: store as unknown as PhaseDependencies['store'],
    audit,
    logger,
    now: () => NOW,
    metrics: { decisionRecorded: () => {} } as unknown as PhaseDependencies['metrics'],
    approvalHook: { name: 'change-freeze', timeoutMs, decide },
  });
  const scope = { lease: { guard: <T>(operation: () => Promise<T>) => operation(), fence: { threadKey: 'T1:C1:1.0', token: '1' }, lost: () => false } } as unknown as TurnScope;
  return { consult: (step: PendingStep) => consult(scope, step), warnings, audit };
}

describe('consulting the approval hook', () => {
  it('marks the step only when a hook is configured, until its time limit and a moment to record its answer', () => {
    expect(hookDecidingMark({ hook: undefined, now: NOW })).toEqual({});
    expect(hookDecidingMark({ hook: { name: 'h', timeoutMs: 5_000, decide: () => undefined }, now: NOW })).toEqual({ hookDecidingUntil: NOW + 7_000 });
  });

  it('lets the hook decide only while the mark keeps people off, a moment to record its answer before it lapses', () => {
    const hook = { name: 'h', timeoutMs: 5_000, decide: () => undefined };
    expect(hookTimeLimit({ hook, step: { hookDecidingUntil: NOW + 7_000 }, now: NOW })).toBe(5_000);
    expect(hookTimeLimit({ hook, step: { hookDecidingUntil: NOW + 7_000 }, now: NOW + 1_500 })).toBe(3_500);
    expect(hookTimeLimit({ hook, step: { hookDecidingUntil: NOW + 1_000 }, now: NOW })).toBe(0);
    expect(hookTimeLimit({ hook, step: {}, now: NOW })).toBe(5_000);
  });

  it('stops asking the hook when the mark runs out, when the step could not be marked again before it was asked', async () => {
    const store = storeHolding(makeStep(['a1'], { hookDecidingUntil: NOW + 2_500 }));
    const commitStep = store.commitStep;
    let writes = 0;
    // The write that marks the step again fails (a Redis hiccup); the hook's own writes go through.
    store.commitStep = async (transition) => (++writes === 1 ? Promise.reject(new Error('connection reset')) : commitStep(transition));
    const aborted: string[] = [];
    const { consult } = consultation(
      store,
      (request) =>
        new Promise((resolve) =>
          request.signal.addEventListener('abort', () => {
            aborted.push((request.signal.reason as Error).message);
            resolve({ decision: 'approve' });
          }),
        ),
      60_000,
    );
    const after = await consult(store.current());
    // Half a second of the mark was left, less the moment to record an answer.
    expect(aborted).toEqual(['onApprovalRequest hook change-freeze timed out after 500 ms']);
    expect(after.decisions).toEqual({});
    expect(store.current().decisions).toEqual({});
  });

  it('says in the log and the audit trail when its deny came for a call someone approved meanwhile', async () => {
    const opened = makeStep(['a1'], { hookDecidingUntil: NOW + 7_000 });
    const store = storeHolding(opened);
    const { consult, warnings, audit } = consultation(store, () => {
      // Bob's click as the mark lapses: the hook answered at the last moment and its write was slow.
      const click = applyCallAction(
        store.current(),
        { stepId: opened.stepId, approvalId: 'a1', userId: 'U0BOB', origin: { teamId: opened.teamId, channel: opened.channel, membership: 'member' }, action: { kind: 'approve', version: 0 } },
        { now: store.current().hookDecidingUntil!, groupMembers: new Map(), newGrantId: () => 'g' },
      );
      if (!click.ok) throw new Error(click.refusal.message);
      store.set(click.transition.step);
      return { decision: 'deny', reason: 'change freeze until Monday' };
    });

    const after = await consult(opened);
    expect(after.decisions.a1).toMatchObject({ outcome: 'approved', userId: 'U0BOB' });
    expect(warnings).toContainEqual(expect.objectContaining({ event: 'approval-hook-not-counted', hook: 'change-freeze', decision: 'deny', code: 'already-decided' }));
    expect(await audit.read({ sinceMs: 0, limit: 10 })).toEqual([
      expect.objectContaining({
        type: 'action-refused',
        channel: opened.channel,
        userId: 'hook:change-freeze',
        action: 'deny',
        code: 'already-decided',
        reason: "the approval hook's deny (change freeze until Monday) came too late: the call was already approved by U0BOB while the hook was deciding",
      }),
    ]);
  });

  it('lets people act once the hook is done: after its last decision, and when it decided nothing or failed', async () => {
    const deadline = { hookDecidingUntil: NOW + 7_000 };
    const decided = storeHolding(makeStep(['a1', 'a2'], deadline));
    const denied = await consultation(decided, () => ({ decision: 'deny', reason: 'no' })).consult(decided.current());
    expect(denied.phase).toBe('complete');
    expect(decided.current()).toMatchObject({ revision: 2, decisions: { a1: { outcome: 'denied' }, a2: { outcome: 'denied' } } });
    expect(decided.current().hookDecidingUntil).toBeUndefined();

    for (const decide of [() => undefined, () => Promise.reject(new Error('calendar down'))]) {
      const left = storeHolding(makeStep(['a1'], deadline));
      const after = await consultation(left, decide).consult(left.current());
      expect(after.hookDecidingUntil).toBeUndefined();
      expect(left.current()).toMatchObject({ revision: 1, decisions: {} });
      expect(left.current().hookDecidingUntil).toBeUndefined();
    }
  });
});
