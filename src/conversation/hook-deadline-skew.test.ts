import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { CREATED_AT, makeStep } from '../approvals/pending-step.test-support.js';
import type { PendingStep } from '../approvals/pending-step.js';
import type { StepTransition } from '../approvals/transitions/step-transition.js';
import { createMemoryAuditLog } from '../audit/memory-audit-log.js';
import { createApprovalHookConsultation } from './consult-approval-hook.js';
import type { PhaseDependencies } from './phase-dependencies.js';
import type { TurnScope } from './turn-scope.js';

/**
 * A hook's approval is written without the deadline a person's click carries
 * (`StepTransition.deadline`), so only the clock of the process that asked the hook judges the
 * expiry. README: "a hook's approval after the expiry is refused like a click", and a click's
 * deadline "is judged by Redis's clock, TIME, in the write that records the action, so a replica
 * whose clock runs behind cannot record an approval after it". The store below judges a
 * transition's deadline by its own clock, as COMMIT_STEP_SCRIPT does with TIME.
 */
describe('a hook approval from a process whose clock is behind', () => {
  it('is refused by the shared clock once the request has expired', async () => {
    const expiresAt = CREATED_AT + 60_000;
    // The shared clock (Redis TIME) is 30 s past the expiry; this process's clock says 30 s before it.
    const storeClock = expiresAt + 30_000;
    const processClock = expiresAt - 30_000;
    let stored: PendingStep = structuredClone(makeStep(['a1'], { expiresAt, hookDecidingUntil: processClock + 7_000 }));
    const store = {
      getStep: async () => structuredClone(stored),
      commitStep: async (transition: StepTransition) => {
        if (transition.fromRevision !== stored.revision) return { result: 'conflict' as const };
        if (transition.deadline !== undefined && storeClock >= transition.deadline) return { result: 'expired' as const };
        stored = structuredClone({ ...transition.step, revision: transition.fromRevision + 1 });
        return { result: 'committed' as const };
      },
    };
    const logger = pino({ level: 'silent' });
    const audit = createMemoryAuditLog({ logger });
    const consult = createApprovalHookConsultation({
      store: store as unknown as PhaseDependencies['store'],
      audit,
      logger,
      now: () => processClock,
      metrics: { decisionRecorded: () => {} } as unknown as PhaseDependencies['metrics'],
      approvalHook: { name: 'auto-staging', timeoutMs: 5_000, decide: () => ({ decision: 'approve' }) },
    });
    const scope = { lease: { guard: <T>(operation: () => Promise<T>) => operation(), fence: { threadKey: 'T1:C1:1.0', token: '1' }, lost: () => false } } as unknown as TurnScope;
    await consult(scope, structuredClone(stored));
    expect(stored.decisions.a1?.outcome).toBeUndefined();
    // Not dropped silently: the trail says the hook's approval came too late.
    expect((await audit.read({ sinceMs: 0 })).map((event) => ({ type: event.type, code: 'code' in event ? event.code : undefined }))).toContainEqual({ type: 'action-refused', code: 'expired' });
  });
});
