import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { resumeToolMessage } from '../agent/decision-messages.js';
import { makeStep } from '../approvals/pending-step.test-support.js';
import type { PendingStep } from '../approvals/pending-step.js';
import { createMemoryAuditLog } from '../audit/memory-audit-log.js';
import { defaultConfig } from '../config/config-file.js';
import { createMemoryStore } from '../store/memory-store.js';
import { newThreadState, type ThreadState } from '../store/thread-state.js';
import { createStepResumer } from './resume-step.js';
import type { TurnScope } from './turn-scope.js';

/**
 * The process that claimed the resume of a decided step stopped (SIGKILL, OOM, a deploy) before the
 * resumed turn ended: the thread's history ends with the step's decisions, the step is `resumed`,
 * and the resume item comes back to another process. For an approval step it runs the turn
 * (resume-step.test.ts). A step of `ask_user` questions only is resumed with a tool message of
 * plain `tool-result` parts (the answers), no `tool-approval-response`: `recoverInterruptedResume`
 * looks only for approval responses, does not recognise it, and returns. The answer was recorded,
 * the card says "Answered by", and the model is never asked again: the thread goes silent.
 */
describe('a resume item for a question step whose resume was already claimed', () => {
  function claimedResume(step: PendingStep) {
    const logger = pino({ level: 'silent' });
    const stored: ThreadState = { ...newThreadState(step, 1_700_000_000_000), messages: [{ role: 'user', content: 'restart the worker' }, resumeToolMessage(step)] };
    const ran: string[] = [];
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
      cards: { postUnpostedCard: async () => false },
    });
    const scope = { lease: { fence: { threadKey: step.threadKey, token: '2' } } } as unknown as TurnScope;
    return { resume: () => resumer.resume(scope, step.stepId, { stepId: step.stepId, step, thread: stored }), ran };
  }

  it('control: an approval step is run again', async () => {
    const step = makeStep(['apv-1'], { phase: 'resumed', resumedBy: '1', decisions: { 'apv-1': { outcome: 'approved', userId: 'U0BOB', at: 1_700_000_000_000, version: 0, approvedBy: ['U0BOB'] } } });
    const { resume, ran } = claimedResume(step);
    await resume();
    expect(ran).toEqual([step.requesterId]);
  });

  it('runs the turn when the process that claimed it stopped before the turn ended', async () => {
    const step = makeStep([{ approvalId: 'q1', kind: 'question', input: { question: 'Which namespace?', options: ['staging', 'prod'] } }], {
      phase: 'resumed',
      resumedBy: '1',
      decisions: { q1: { outcome: 'answered', userId: 'U0ALICE', at: 1_700_000_000_000, answer: 'prod' } },
    });
    const { resume, ran } = claimedResume(step);
    await resume();
    expect(ran, 'the answered question is never given to the model').toEqual([step.requesterId]);
  });
});
