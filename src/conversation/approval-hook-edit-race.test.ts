import { randomUUID } from 'node:crypto';
import { pino } from 'pino';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { approvedRunsFor } from '../agent/approved-runs.js';
import type { ApprovalHook, ApprovalHookFunction } from '../approvals/approval-hook.js';
import { evaluation, makeStep } from '../approvals/pending-step.test-support.js';
import type { PendingStep } from '../approvals/pending-step.js';
import { applyCallAction } from '../approvals/transitions/call-action.js';
import { commitTransition } from '../approvals/transitions/commit-transition.js';
import { createMemoryAuditLog } from '../audit/memory-audit-log.js';
import { newStepId } from '../store/redis-keys.js';
import { createRedisStore } from '../store/redis-store.js';
import { newThreadState } from '../store/thread-state.js';
import { createApprovalHookConsultation } from './consult-approval-hook.js';
import type { PhaseDependencies } from './phase-dependencies.js';
import type { TurnScope } from './turn-scope.js';

const silent = pino({ level: 'silent' });
const staging = { service: 'api', namespace: 'staging' };
const prod = { service: 'api', namespace: 'prod' };

/**
 * The approval hook is asked about a call's input as opened (version 0). Someone may edit it before
 * the hook's answer is written: the step's mark keeps people off while the hook decides, but it
 * lapses once the hook's time (and a moment to write its answer) is up, and a write can be slow.
 * Here Bob (anyone in the channel may approve staging) edits staging to prod, which only Carol may
 * approve. The hook's approval is of staging: it must not approve prod.
 */
describe('the approval hook and an edit made while it decides (real Redis)', () => {
  const store = createRedisStore({ url: inject('redisUrl'), keyPrefix: `hookedit:${randomUUID()}:` });
  afterAll(() => store.close());

  /** A step as the turn opens it, with the hook's mark; the thread's lease held. */
  async function openStep(hookDecidingUntil: number) {
    const threadTs = `1700000000.${Math.floor(Math.random() * 1e6)}`;
    const template = makeStep([{ approvalId: 'a1', input: staging, policy: evaluation({ approvers: [{ kind: 'channel' }] }) }], { threadTs });
    const threadKey = template.threadKey;
    const token = (await store.tryLock(threadKey, 60_000))!;
    const fence = { threadKey, token };
    const opened: PendingStep = { ...template, stepId: newStepId(threadKey), createdAt: Date.now(), hookDecidingUntil };
    const thread = { ...newThreadState(opened, Date.now()), threadKey, pendingStepId: opened.stepId };
    await store.createStep({ step: opened, thread, ttlMs: 60_000, audit: [], fence });
    const scope = { lease: { guard: <T>(operation: () => Promise<T>) => operation(), fence, lost: () => false } } as unknown as TurnScope;
    return { opened, scope };
  }

  /** Bob's Edit to prod at `now`, through the same path as his click. */
  function bobEditsToProd(stepId: string, now: (current: PendingStep) => number) {
    const prodPolicy = evaluation({ rule: { index: 1, name: 'prod' }, approvers: [{ kind: 'user', userId: 'U0CAROL' }] as never });
    return commitTransition(store, stepId, (current) => {
      const result = applyCallAction(
        current,
        {
          stepId,
          approvalId: 'a1',
          userId: 'U0BOB',
          origin: { teamId: current.teamId, channel: current.channel, membership: 'member' },
          action: { kind: 'edit', fromVersion: 0, input: prod, submittedInput: prod, policy: prodPolicy },
        },
        { now: now(current), groupMembers: new Map(), newGrantId: randomUUID },
      );
      if (!result.ok) throw new Error(result.refusal.message);
      return result.transition;
    });
  }

  function consultation(decide: ApprovalHookFunction) {
    const audit = createMemoryAuditLog({ logger: silent });
    const hook: ApprovalHook = { name: 'change-freeze', timeoutMs: 5_000, decide };
    const consult = createApprovalHookConsultation({
      store,
      audit,
      logger: silent,
      now: Date.now,
      metrics: { decisionRecorded: () => {} } as unknown as PhaseDependencies['metrics'],
      approvalHook: hook,
    });
    return { consult, audit };
  }

  const runInputs = (step: PendingStep) => [...approvedRunsFor(step).values()].map((run) => run.input);

  it('does not record its approval of staging on the prod version Bob made as its mark lapsed', async () => {
    const { opened, scope } = await openStep(Date.now() + 7_000);
    const seenByHook: unknown[] = [];
    const { consult, audit } = consultation(async (request) => {
      seenByHook.push(request.input);
      // Bob clicks the moment the mark lapses: the hook's answer is still being written.
      const edited = await bobEditsToProd(opened.stepId, (current) => current.hookDecidingUntil!);
      expect(edited?.calls[0]?.versions).toHaveLength(2);
      // The change calendar says staging is fine.
      return { decision: 'approve' };
    });
    await consult(scope, opened);

    expect(seenByHook).toEqual([staging]);
    const stored = (await store.getStep(opened.stepId))!;
    // Nobody approved prod: not the hook (it saw staging), not Bob (not eligible), not Carol.
    expect(runInputs(stored)).not.toContainEqual(prod);
    expect(stored.decisions.a1).toBeUndefined();
    expect(await audit.read({ sinceMs: 0, limit: 10 })).toEqual([
      expect.objectContaining({
        type: 'action-refused',
        userId: 'hook:change-freeze',
        action: 'approve',
        code: 'input-changed',
        reason: "the approval hook's approval came too late: the input was edited by U0BOB while the hook was deciding (now version 2); the hook approved version 1",
      }),
    ]);
  });

  it('keeps Bob off the step for the whole time the hook decides, even when storing the step used up its first mark', async () => {
    // The mark the step was stored with had lapsed by the time the hook was asked (a slow write).
    const { opened, scope } = await openStep(Date.now() - 1);
    const bob: string[] = [];
    const { consult } = consultation(async () => {
      await bobEditsToProd(opened.stepId, () => Date.now()).catch((error: Error) => bob.push(error.message));
      return { decision: 'approve' };
    });
    await consult(scope, opened);

    expect(bob).toEqual(['A policy check is still running on this request, so nothing changed; try again in a moment.']);
    const stored = (await store.getStep(opened.stepId))!;
    expect(stored.decisions.a1).toMatchObject({ outcome: 'approved', userId: 'hook:change-freeze', version: 0 });
    expect(runInputs(stored)).toEqual([staging]);
    expect(stored.hookDecidingUntil).toBeUndefined();
  });
});
