import type { ModelMessage } from 'ai';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { closingToolMessage, COUNTERSIGN_ACTOR, resumeToolMessage } from '../agent/decision-messages.js';
import { makeStep } from '../approvals/pending-step.test-support.js';
import type { PendingStep } from '../approvals/pending-step.js';
import { createMemoryAuditLog } from '../audit/memory-audit-log.js';
import { defaultConfig } from '../config/config-file.js';
import { createMemoryStore } from '../store/memory-store.js';
import type { StateStore } from '../store/state-store.js';
import { newThreadState, type ThreadState } from '../store/thread-state.js';
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
      policy: defaultConfig().policy,
      tools: [],
      resolveGroups: async () => new Map(),
      loadThread: unused,
      runAndPublish: unused,
      closeInterruptedCalls: unused,
      cards: { postUnpostedCard: unused },
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

describe('a resume item for a step whose resume was already claimed', () => {
  /** A step resumed with its decisions recorded, and a resumer that records the turns it runs. */
  function claimedResume(
    thread: Partial<ThreadState> | ((step: PendingStep) => Partial<ThreadState>),
    step = makeStep(['apv-1'], { phase: 'resumed', decisions: { 'apv-1': { outcome: 'approved', userId: 'U0BOB', at: 1_700_000_000_000, version: 0, approvedBy: ['U0BOB'] } } }),
  ) {
    const logger = pino({ level: 'silent' });
    const stored: ThreadState = { ...newThreadState(step, 1_700_000_000_000), messages: [{ role: 'user', content: 'restart the api' }, resumeToolMessage(step)], ...(typeof thread === 'function' ? thread(step) : thread) };
    const ran: string[] = [];
    const cardsPosted: string[] = [];
    const resumer = createStepResumer({
      store: createMemoryStore(),
      audit: createMemoryAuditLog({ logger }),
      logger,
      now: Date.now,
      policy: defaultConfig().policy,
      tools: [],
      resolveGroups: async () => new Map(),
      loadThread: async () => {
        throw new Error('not reached: the step is of the lease thread');
      },
      runAndPublish: async (_scope, _thread, requesterId) => {
        ran.push(requesterId);
      },
      closeInterruptedCalls: async () => {},
      // A step the thread waits on here was opened by the stopped process, which never posted its card.
      cards: {
        postUnpostedCard: async (_scope, waiting) => {
          if (waiting.pendingStepId === undefined) return false;
          cardsPosted.push(waiting.pendingStepId);
          return true;
        },
      },
    });
    const notices: string[] = [];
    const cardsShown: PendingStep[] = [];
    const scope = {
      lease: { fence: { threadKey: step.threadKey, token: '1' } },
      messenger: {
        postNotice: async ({ text }: { text: string }) => void notices.push(text),
        updateStepCard: async ({ step: shown }: { step: PendingStep }) => void cardsShown.push(shown),
      },
      saveAtEnd: () => {},
    } as unknown as TurnScope;
    const resume = () => resumer.resume(scope, step.stepId, { stepId: step.stepId, step, thread: stored });
    return { resume, ran, cardsPosted, notices, cardsShown, requesterId: step.requesterId };
  }

  it('runs the turn when the process that claimed it stopped before the turn ended', async () => {
    const { resume, ran, requesterId } = claimedResume({});
    await resume();
    expect(ran).toEqual([requesterId]);
  });

  it('shows the card as the claim left the step: the claim may have stopped before refreshing it (an approval it revoked)', async () => {
    const revoked = makeStep(['apv-1'], {
      phase: 'resumed',
      cardTs: '1700000000.000200',
      decisions: { 'apv-1': { outcome: 'denied', userId: COUNTERSIGN_ACTOR, at: 1_700_000_000_000, reason: 'the approval no longer holds' } },
    });
    const { resume, ran, cardsShown } = claimedResume({}, revoked);
    await resume();
    expect({ ran, cardsShown: cardsShown.map((shown) => shown.decisions) }).toEqual({ ran: [revoked.requesterId], cardsShown: [revoked.decisions] });
  });

  it('posts the card of the step the resumed turn went on to open when the process stopped before posting it', async () => {
    const asked: ModelMessage = { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'call_2', toolName: 'restart_service', input: {} }] };
    const { resume, ran, cardsPosted } = claimedResume((step) => ({ pendingStepId: 'step-2', messages: [{ role: 'user', content: 'restart the api' }, resumeToolMessage(step), asked] }));
    await resume();
    expect({ ran, cardsPosted }).toEqual({ ran: [], cardsPosted: ['step-2'] });
  });

  it('does not run a resumed turn that failed again: the thread shows the failure, and only Try again runs it', async () => {
    const { resume, ran, notices } = claimedResume({ failedTurn: { id: 'failure-1', requesterId: 'U0ALICE', at: 1_700_000_000_000 } });
    await resume();
    expect({ ran, notices }).toEqual({ ran: [], notices: [] });
  });

  it('posts the notice of a resumed turn that failed when the process stopped before posting it', async () => {
    const notice = ':warning: Sorry, I could not finish this. Click *Try again* or send another message.';
    const { resume, ran, notices } = claimedResume({ failedTurn: { id: 'failure-1', requesterId: 'U0ALICE', at: 1_700_000_000_000, unpostedNotice: notice } });
    await resume();
    expect({ ran, notices }).toEqual({ ran: [], notices: [notice] });
  });

  describe('a claim that ended the turn (every call expired, onExpiry: stop)', () => {
    const expired = () => makeStep(['apv-1'], { phase: 'resumed', decisions: { 'apv-1': { outcome: 'expired', userId: 'U0ALICE', at: 1_700_000_000_000 } } });
    const notice = ':alarm_clock: The approval request expired without a decision, so nothing was run. Mention me to try again.';

    it('posts its notice when the process stopped before posting it, and does not ask the model', async () => {
      const { resume, ran, notices } = claimedResume((step) => ({ messages: [{ role: 'user', content: 'restart the api' }, closingToolMessage(step)], unpostedStopNotice: notice }), expired());
      await resume();
      expect({ ran, notices }).toEqual({ ran: [], notices: [notice] });
    });

    it('does not ask the model once its notice was posted', async () => {
      const { resume, ran, notices } = claimedResume((step) => ({ messages: [{ role: 'user', content: 'restart the api' }, closingToolMessage(step)] }), expired());
      await resume();
      expect({ ran, notices }).toEqual({ ran: [], notices: [] });
    });
  });
});
