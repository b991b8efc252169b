import { setTimeout as delay } from 'node:timers/promises';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { MAX_APPROVAL_HOOK_TIMEOUT_MS, resolveApprovalHook } from '../approvals/approval-hook.js';
import { CREATED_AT, makeStep } from '../approvals/pending-step.test-support.js';
import type { PendingStep } from '../approvals/pending-step.js';
import type { StepTransition } from '../approvals/transitions/step-transition.js';
import { createMemoryAuditLog } from '../audit/memory-audit-log.js';
import { ConfigError } from '../config/config-error.js';
import { createApprovalHookConsultation, hookDecidingMark } from './consult-approval-hook.js';
import type { PhaseDependencies } from './phase-dependencies.js';
import type { TurnScope } from './turn-scope.js';

const NOW = CREATED_AT + 1_000;
const approveSoon = async () => {
  await delay(20);
  return { decision: 'approve' as const };
};

/**
 * Node fires a timer of more than 2^31-1 ms after 1 ms: a hook given such a time limit, meant as
 * "no limit to speak of", would time out at once on every call. Start-up refuses it instead.
 */
describe('an onApprovalRequest time limit past what a timer can hold', () => {
  it('is refused at start-up, naming the field', () => {
    for (const timeoutMs of [2 ** 31, MAX_APPROVAL_HOOK_TIMEOUT_MS + 1]) {
      let thrown: unknown;
      try {
        resolveApprovalHook({ name: 'slow-but-sure', timeoutMs, decide: approveSoon });
      } catch (error) {
        thrown = error;
      }
      expect(ConfigError.isInstance(thrown) && thrown.problems).toEqual([{ field: 'onApprovalRequest.timeoutMs', message: 'must be a positive number of milliseconds, at most 86400000 (a day)' }]);
    }
  });

  it('the longest one start-up accepts lets a hook that answers after 20 ms decide the call', async () => {
    const hook = resolveApprovalHook({ name: 'slow-but-sure', timeoutMs: MAX_APPROVAL_HOOK_TIMEOUT_MS, decide: approveSoon })!;
    let stored: PendingStep = makeStep(['a1'], hookDecidingMark({ hook, now: NOW }));
    const store = {
      getStep: async () => structuredClone(stored),
      commitStep: async (transition: StepTransition) => {
        if (transition.fromRevision !== stored.revision) return { result: 'conflict' as const };
        stored = structuredClone(transition.step);
        return { result: 'committed' as const };
      },
    };
    const errors: unknown[] = [];
    const logger = pino({ level: 'silent' });
    logger.error = ((fields: unknown, message: unknown) => errors.push([fields, message])) as never;
    const consult = createApprovalHookConsultation({
      store: store as unknown as PhaseDependencies['store'],
      audit: createMemoryAuditLog({ logger }),
      logger,
      now: () => NOW,
      metrics: { decisionRecorded: () => {} } as unknown as PhaseDependencies['metrics'],
      approvalHook: hook,
    });
    const scope = { lease: { guard: <T>(operation: () => Promise<T>) => operation(), fence: { threadKey: 'T1:C1:1.0', token: '1' }, lost: () => false } } as unknown as TurnScope;
    const after = await consult(scope, structuredClone(stored));
    expect(errors).toEqual([]);
    expect(after.decisions.a1).toMatchObject({ outcome: 'approved', userId: 'hook:slow-but-sure' });
  });
});
