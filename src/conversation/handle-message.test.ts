import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { CHANNEL, makeStep, TEAM } from '../approvals/pending-step.test-support.js';
import type { PendingStep } from '../approvals/pending-step.js';
import type { StateStore } from '../store/state-store.js';
import { newThreadState, type ThreadState } from '../store/thread-state.js';
import { createMessageHandler } from './handle-message.js';
import type { StepResumer } from './resume-step.js';
import type { StepCards } from './step-card.js';
import type { TurnScope } from './turn-scope.js';
import type { MessageWorkItem } from './work-item.js';

const THREAD_TS = '1700000000.000100';
const APPROVED = { outcome: 'approved' as const, userId: 'U0BOB', at: 1_700_000_000_000, version: 0, approvedBy: ['U0BOB'] };

/** A step every call of which was approved, waiting to be resumed. */
const decidedStep = (approvalId: string): PendingStep => makeStep([approvalId], { threadTs: THREAD_TS, phase: 'complete', decisions: { [approvalId]: APPROVED } });

/**
 * A thread whose open step is decided, and a resumer under which each resumed turn opens the next
 * step of `chain` (already decided too: its approvers clicked before the message could close it).
 */
function threadWithDecidedSteps(chain: PendingStep[], { deletedTs = [], stored: given }: { deletedTs?: string[]; stored?: ThreadState } = {}) {
  const logger = pino({ level: 'silent' });
  const steps = new Map(chain.map((step) => [step.stepId, step]));
  let stored: ThreadState = given ?? { ...newThreadState({ teamId: TEAM, channel: CHANNEL, threadTs: THREAD_TS }, 0), pendingStepId: chain[0]?.stepId };
  let saves = 0;
  const notices: string[] = [];
  const resumed: string[] = [];
  const turnsRun: ThreadState[] = [];
  const resumer = {
    resume: async () => {},
    finishInlineResume: async () => false,
    claimAndResume: async (_scope: TurnScope, thread: ThreadState, stepId: string) => {
      resumed.push(stepId);
      const { pendingStepId: _resumed, ...rest } = thread;
      const next = chain[chain.findIndex((step) => step.stepId === stepId) + 1];
      stored = next ? { ...rest, pendingStepId: next.stepId } : rest;
      Object.assign(thread, rest);
      delete thread.pendingStepId;
      return true;
    },
  } as unknown as StepResumer;
  const store = {
    getStep: async (stepId: string) => steps.get(stepId),
    commitStep: async () => {
      throw new Error('not reached: a decided step is not superseded');
    },
    executingCalls: async () => new Map(),
  } as unknown as StateStore;
  const handleMessage = createMessageHandler({
    store,
    logger,
    now: Date.now,
    botUserId: 'UBOT',
    loadThread: async () => structuredClone(stored),
    loadMessageThread: async ({ channel, ts }) => ({ thread: structuredClone(stored), deleted: channel === CHANNEL && deletedTs.includes(ts) }),
    runAndPublish: async (_scope, thread) => {
      turnsRun.push(structuredClone(thread));
    },
    closeInterruptedCalls: async () => {},
    cards: {} as StepCards,
    resumer,
  });
  const scope = {
    lease: { fence: { threadKey: stored.threadKey, token: '1' }, guard: <T>(operation: () => Promise<T>) => operation() },
    save: async (thread: ThreadState) => {
      saves += 1;
      stored = structuredClone(thread);
    },
    saveAtEnd: (thread: ThreadState) => {
      stored = structuredClone(thread);
    },
    flush: async () => {},
    messenger: { postNotice: async ({ text }: { text: string }) => void notices.push(text) },
  } as unknown as TurnScope;
  const item: MessageWorkItem = { kind: 'message', userId: 'U0ALICE', text: 'what happened?', ts: ITEM_TS, teamId: TEAM, channel: CHANNEL, threadTs: THREAD_TS, readEarlierMessages: false };
  return { handle: () => handleMessage(scope, item), resumed, turnsRun, notices, stored: () => stored, saves: () => saves };
}

const ITEM_TS = '1700000001.000100';

describe('a new message while the thread has a decided, unresumed step', () => {
  it('resumes the step its resumed turn opened too when that one was decided before the message could close it', async () => {
    const first = decidedStep('apv-1');
    const second = decidedStep('apv-2');
    const thread = threadWithDecidedSteps([first, second]);
    await thread.handle();
    expect(thread.resumed).toEqual([first.stepId, second.stepId]);
    expect(thread.turnsRun).toHaveLength(1);
    expect(thread.turnsRun[0]?.pendingStepId).toBeUndefined();
    expect(thread.turnsRun[0]?.messages.at(-1)).toMatchObject({ role: 'user' });
  });

  it('stops, without taking the message in, when resumed turns keep opening decided steps', async () => {
    const chain = Array.from({ length: 10 }, (_, index) => decidedStep(`apv-${index}`));
    const thread = threadWithDecidedSteps(chain);
    await expect(thread.handle()).rejects.toMatchObject({ code: 'countersign_step_contended' });
    expect(thread.resumed).toHaveLength(5);
    expect(thread.turnsRun).toEqual([]);
    // The step left open is a decided one, for its own resume item; nothing was told it did not run.
    expect(thread.stored().pendingStepId).toBe(chain[5]?.stepId);
    expect(thread.stored().messages).toEqual([]);
  });
});

describe('a message its author deleted while it waited in the queue', () => {
  it('is not taken in: the open card stays open, nothing is saved and no turn runs', async () => {
    // An undecided card: superseding it would commit a transition, which this store refuses.
    const open = makeStep(['apv-1'], { threadTs: THREAD_TS });
    const thread = threadWithDecidedSteps([open], { deletedTs: [ITEM_TS] });
    await thread.handle();
    expect(thread.turnsRun).toEqual([]);
    expect(thread.resumed).toEqual([]);
    expect(thread.saves()).toBe(0);
    expect(thread.stored().pendingStepId).toBe(open.stepId);
    expect(thread.stored().handledTs ?? []).not.toContain(ITEM_TS);
  });

  it('still finishes its turn when it was taken in before the deletion', async () => {
    const taken: ThreadState = {
      ...newThreadState({ teamId: TEAM, channel: CHANNEL, threadTs: THREAD_TS }, 0),
      messages: [{ role: 'user', content: 'what happened?' }],
      handledTs: [ITEM_TS],
    };
    const thread = threadWithDecidedSteps([], { deletedTs: [ITEM_TS], stored: taken });
    await thread.handle();
    expect(thread.turnsRun).toHaveLength(1);
  });
});

describe('a message taken in by a process that stopped after saving its turn failed, before the notice', () => {
  it('gets the notice with Try again, and its failed turn is not run again', async () => {
    const notice = ':warning: Sorry, I could not finish this. Click *Try again* or send another message.';
    const failed: ThreadState = {
      ...newThreadState({ teamId: TEAM, channel: CHANNEL, threadTs: THREAD_TS }, 0),
      messages: [{ role: 'user', content: 'what happened?' }],
      handledTs: [ITEM_TS],
      failedTurn: { id: 'failure-1', requesterId: 'U0ALICE', at: 1, unpostedNotice: notice },
    };
    const thread = threadWithDecidedSteps([], { stored: failed });
    await thread.handle();
    expect({ notices: thread.notices, turns: thread.turnsRun.length }).toEqual({ notices: [notice], turns: 0 });
    expect(thread.stored().failedTurn).toEqual({ id: 'failure-1', requesterId: 'U0ALICE', at: 1 });
  });
});
