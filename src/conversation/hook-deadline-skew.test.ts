import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { createCurrentEvaluation } from '../approvals/evaluate-call-policy.js';
import { CREATED_AT, makeStep } from '../approvals/pending-step.test-support.js';
import type { PendingStep } from '../approvals/pending-step.js';
import type { CurrentEvaluation } from '../approvals/policy/governing-policy.js';
import type { StepTransition } from '../approvals/transitions/step-transition.js';
import { createMemoryAuditLog } from '../audit/memory-audit-log.js';
import { parseConfigFile } from '../config/config-file.js';
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
const MINUTE = 60_000;

/** The hook approves `stored`'s call from a process whose clock reads `processClock`, with Redis's at `storeClock`. */
async function hookApproves({ stored: initial, processClock, storeClock, currentEvaluation }: { stored: PendingStep; processClock: number; storeClock: number; currentEvaluation?: CurrentEvaluation }) {
  let stored: PendingStep = structuredClone(initial);
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
    ...(currentEvaluation ? { currentEvaluation } : {}),
  });
  const scope = { lease: { guard: <T>(operation: () => Promise<T>) => operation(), fence: { threadKey: 'T1:C1:1.0', token: '1' }, lost: () => false } } as unknown as TurnScope;
  await consult(scope, structuredClone(stored));
  const refused = (await audit.read({ sinceMs: 0 })).map((event) => ({ type: event.type, code: 'code' in event ? event.code : undefined }));
  return { outcome: stored.decisions.a1?.outcome, refused };
}

describe('a hook approval from a process whose clock is behind', () => {
  it('is refused by the shared clock once the request has expired', async () => {
    const expiresAt = CREATED_AT + 60_000;
    // The shared clock (Redis TIME) is 30 s past the expiry; this process's clock says 30 s before it.
    const processClock = expiresAt - 30_000;
    const { outcome, refused } = await hookApproves({ stored: makeStep(['a1'], { expiresAt, hookDecidingUntil: processClock + 7_000 }), processClock, storeClock: expiresAt + 30_000 });
    expect(outcome).toBeUndefined();
    // Not dropped silently: the trail says the hook's approval came too late.
    expect(refused).toContainEqual({ type: 'action-refused', code: 'expired' });
  });

  it("is refused by the shared clock once the expiry the config in force sets has passed, though the step's own has not", async () => {
    // Created under `expiry: 1h`; the config in force (a deploy since) says 15m, as a click is judged by.
    const expiresAt = CREATED_AT + 60 * MINUTE;
    const shortened = CREATED_AT + 15 * MINUTE;
    const policy = parseConfigFile('policy:\n  rules:\n    - name: restarts\n      tools: [restart_service]\n      approval: always\n      expiry: 15m\n', 'deploy.yml').policy;
    const currentEvaluation = createCurrentEvaluation({ policy, tools: [] });
    // Redis's clock is 30 s past the shortened deadline (45 minutes before the stored one); this process's says 30 s before it.
    const processClock = shortened - 30_000;
    const stored = makeStep(['a1'], { expiresAt, hookDecidingUntil: processClock + 7_000 });
    const { outcome, refused } = await hookApproves({ stored, processClock, storeClock: shortened + 30_000, currentEvaluation });
    expect(outcome).toBeUndefined();
    expect(refused).toContainEqual({ type: 'action-refused', code: 'expired' });

    // Before the shortened deadline by both clocks, the same approval is recorded.
    expect((await hookApproves({ stored, processClock, storeClock: shortened - 1, currentEvaluation })).outcome).toBe('approved');
  });
});
