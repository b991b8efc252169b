import { describe, expect, it } from 'vitest';
import { makeStep } from '../approvals/pending-step.test-support.js';
import type { PendingStep } from '../approvals/pending-step.js';
import { rejudgeResumeTransition } from '../approvals/transitions/close-step.js';
import { StepContendedError } from '../approvals/transitions/commit-transition.js';
import { createMemoryStore } from '../store/memory-store.js';
import { newThreadState } from '../store/thread-state.js';
import type { Lease } from './lease.js';
import { saveWithStepRetrying } from './save-with-step-retrying.js';
import type { ThreadMessenger } from './thread-messenger.js';
import { createTurnScope } from './turn-scope.js';

const TTL = 86_400_000;

/** A resumed step on record, and a scope holding its thread. */
async function setUp() {
  const store = createMemoryStore();
  const step = makeStep(['a1'], { phase: 'resumed', cardTs: '1700000000.000200' });
  const thread = newThreadState(step, Date.now());
  const token = (await store.tryLock(step.threadKey, TTL))!;
  const fence = { threadKey: step.threadKey, token };
  await store.createStep({ step, thread, ttlMs: TTL, audit: [], fence });
  const lease: Lease = { fence, signal: new AbortController().signal, assertCurrent: async () => {}, assertHeld: async () => {}, guard: (write) => write(), lost: () => false, stateLost: () => false };
  const scope = createTurnScope({ store, messenger: {} as ThreadMessenger, lease, limits: { historyTtlMs: TTL, maxMessages: 500, maxBytes: 10_000_000 }, now: Date.now, takeBacks: { takeBack: async () => {} } });
  /** Another write of the step (as another holder's would be): the step moves on from what was read. */
  const moveStep = async () => {
    const current = (await store.getStep(step.stepId))!;
    expect(await scope.saveWithStep(rejudgeResumeTransition(current, { fence, decisions: {} })!, thread)).toBe('committed');
  };
  const write = (read: PendingStep | undefined) => ({ transition: rejudgeResumeTransition(read!, { fence, decisions: {} })!, thread, whenCommitted: () => 'written' });
  /** Up to three tries. */
  const saving = (writeFor: (read: PendingStep | undefined) => ReturnType<typeof write> | Promise<ReturnType<typeof write>>, stepAsRead?: PendingStep) =>
    saveWithStepRetrying({ scope, store, stepId: step.stepId, stepAsRead, maxAttempts: 3, writeFor });
  return { store, step, moveStep, write, saving };
}

describe('saveWithStepRetrying', () => {
  it('writes the step as read with the thread on the first try', async () => {
    const { store, step, write, saving } = await setUp();
    const read: number[] = [];
    const result = await saving((current) => {
      read.push(current!.revision);
      return write(current);
    });
    expect(result).toBe('written');
    expect(read).toEqual([step.revision]);
    expect((await store.getStep(step.stepId))?.revision).toBe(step.revision + 1);
  });

  it('reads the step again and writes it when it moved since it was read', async () => {
    const { store, step, moveStep, write, saving } = await setUp();
    const read: number[] = [];
    const result = await saving(async (current) => {
      read.push(current!.revision);
      if (read.length === 1) await moveStep();
      return write(current);
    }, step);
    expect(result).toBe('written');
    // The first try wrote over the step as read, which had moved: the second read it again.
    expect(read).toEqual([step.revision, step.revision + 1]);
    expect((await store.getStep(step.stepId))?.revision).toBe(step.revision + 2);
  });

  it('gives up with StepContendedError once the step moved under every try', async () => {
    const { moveStep, write, saving } = await setUp();
    let tries = 0;
    const giving = saving(async (current) => {
      tries += 1;
      await moveStep();
      return write(current);
    });
    await expect(giving).rejects.toBeInstanceOf(StepContendedError);
    expect(tries).toBe(3);
  });
});
