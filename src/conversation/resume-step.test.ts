import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { createMemoryAuditLog } from '../audit/memory-audit-log.js';
import { createMemoryStore } from '../store/memory-store.js';
import type { StateStore } from '../store/state-store.js';
import { createStepResumer } from './resume-step.js';
import type { TurnScope } from './turn-scope.js';

describe('resuming a step', () => {
  /** A resumer whose store counts the reads a resume starts with; the step is gone, so the resume ends there. */
  function resumerCountingReads() {
    const logger = pino({ level: 'silent' });
    const store = createMemoryStore();
    const reads: string[] = [];
    const counting: StateStore = {
      ...store,
      getStepAndThread: async (stepId, threadKey) => {
        reads.push(stepId);
        return store.getStepAndThread(stepId, threadKey);
      },
    };
    const unused = async () => {
      throw new Error('not reached: the step is gone');
    };
    const resumer = createStepResumer({
      store: counting,
      audit: createMemoryAuditLog({ logger }),
      logger,
      now: Date.now,
      resolveGroups: async () => new Map(),
      loadThread: unused,
      runAndPublish: unused,
      closeInterruptedCalls: unused,
    });
    const scope = { lease: { fence: { threadKey: 'T1:C1:1.0', token: '1' } } } as unknown as TurnScope;
    return { resumer, scope, reads };
  }

  it("uses the step and thread the worker's pick-up read with the lock instead of reading them again", async () => {
    const { resumer, scope, reads } = resumerCountingReads();
    await resumer.resume(scope, 's1', { stepId: 's1', step: undefined, thread: undefined });
    expect(reads).toEqual([]);
  });

  it('reads for itself when what was read ahead is of another step', async () => {
    const { resumer, scope, reads } = resumerCountingReads();
    await resumer.resume(scope, 's1', { stepId: 's0', step: undefined, thread: undefined });
    await resumer.resume(scope, 's2');
    expect(reads).toEqual(['s1', 's2']);
  });
});
