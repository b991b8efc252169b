import type { ModelMessage } from 'ai';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { INTERRUPTED_CALL } from '../agent/interrupted-calls.js';
import { resumeToolMessage } from '../agent/decision-messages.js';
import type { ApprovedRun } from '../agent/tool-set.js';
import { inputHash } from '../approvals/input-version.js';
import type { PendingStep } from '../approvals/pending-step.js';
import { evaluation, makeStep } from '../approvals/pending-step.test-support.js';
import type { StepTransition } from '../approvals/transitions/step-transition.js';
import type { AuditEventInput } from '../audit/audit-event.js';
import { createMemoryAuditLog } from '../audit/memory-audit-log.js';
import { defaultConfig } from '../config/config-file.js';
import type { ExecutingMarker, StateStore } from '../store/state-store.js';
import { newThreadState, type CarriedApproval, type ThreadState } from '../store/thread-state.js';
import { createCloseInterruptedCalls } from './close-interrupted-calls.js';
import { newFailedTurn } from './failed-turn.js';
import { createRetryFailedTurn } from './retry-failed-turn.js';
import type { TurnScope } from './turn-scope.js';
import type { RetryWorkItem } from './work-item.js';

const NOTHING_TO_RETRY = 'There is nothing to retry here any more.';
const FAILED_AGAIN = ':warning: Sorry, I could not finish this: the model request failed (model exploded). Click *Try again* or send another message.';
const SRE = evaluation({ approvers: [{ kind: 'group', groupId: 'S0SRE' }] });
const WORKER = { service: 'worker', namespace: 'prod' };
const API = { service: 'api', namespace: 'prod' };
const APPROVED_BY_BOB = (input: unknown) => ({ outcome: 'approved' as const, userId: 'U0BOB', at: 1, version: 0, inputHash: inputHash(input), approvedBy: ['U0BOB'] });

/** The process handling the item stopped here: nothing after this point happened. */
class ProcessStopped extends Error {}

/**
 * A thread whose turn failed after Bob approved restarting the worker and the api and before either
 * started, so its failure carries both approvals; Try again is handled by `retry` as a worker would,
 * with `turn` standing in for the model turn each retry runs.
 */
function failedAfterApprovals(options: { openStep?: PendingStep } = {}) {
  const logger = pino({ level: 'silent' });
  // Bob approves as a member of @sre; the test may take him out before a click.
  const sre = new Set(['U0BOB']);
  const resumed = makeStep(
    [
      { approvalId: 'a1', input: WORKER, policy: SRE },
      { approvalId: 'a2', input: API, policy: SRE },
    ],
    { phase: 'resumed' },
  );
  let step: PendingStep = { ...resumed, decisions: { a1: APPROVED_BY_BOB(WORKER), a2: APPROVED_BY_BOB(API) } };
  const asked: ModelMessage = {
    role: 'assistant',
    content: [
      ...step.calls.map((call) => ({ type: 'tool-call' as const, toolCallId: call.toolCallId, toolName: call.toolName, input: call.input })),
      ...step.calls.map((call) => ({ type: 'tool-approval-request' as const, approvalId: call.approvalId, toolCallId: call.toolCallId })),
    ],
  };
  const carried: CarriedApproval[] = step.calls.map((call) => ({ toolCallId: call.toolCallId, toolName: call.toolName, stepId: step.stepId, approvalId: call.approvalId, version: 0, inputHash: inputHash(call.input), approvedBy: ['U0BOB'] }));
  let stored: ThreadState = {
    ...newThreadState(step, 1),
    messages: [{ role: 'user', content: 'restart the worker and the api in prod' }, asked, resumeToolMessage(step)],
    failedTurn: { id: 'failure-1', requesterId: step.requesterId, at: 1, approvedCalls: carried },
  };
  const markers = new Map<string, ExecutingMarker>();
  const store = {
    getStep: async (stepId: string) => structuredClone([step, options.openStep].find((each) => each?.stepId === stepId)),
    executingCalls: async () => new Map(markers),
    // The steps here have no card: nothing for the sweep to draw.
    scheduleCardRefresh: async () => {},
    forgetCardRefresh: async () => true,
  } as unknown as StateStore;
  const ephemerals: string[] = [];
  const notices: string[] = [];
  const audited: AuditEventInput[] = [];
  const save = (thread: ThreadState, saveOptions?: { audit?: readonly AuditEventInput[] }) => {
    stored = structuredClone(thread);
    audited.push(...(saveOptions?.audit ?? []));
  };
  const scope = {
    lease: { fence: { threadKey: stored.threadKey, token: '1' } },
    messenger: {
      postEphemeral: async ({ text }: { text: string }) => void ephemerals.push(text),
      postNotice: async ({ text }: { text: string }) => void notices.push(text),
    },
    save: async (thread: ThreadState, saveOptions?: { audit?: readonly AuditEventInput[] }) => save(thread, saveOptions),
    saveAtEnd: save,
    saveWithStep: async (transition: StepTransition, thread: ThreadState) => {
      if (transition.step.stepId !== step.stepId) return 'not-found';
      if (transition.fromRevision !== step.revision) return 'conflict';
      step = structuredClone(transition.step);
      save(thread, { audit: transition.audit });
      return 'committed';
    },
  } as unknown as TurnScope;
  const turns: Array<{ messages: ModelMessage[]; runs: string[] }> = [];
  const cardsPosted: string[] = [];
  let turn: (thread: ThreadState) => Promise<void> = async () => {};
  const retry = createRetryFailedTurn({
    store,
    audit: createMemoryAuditLog({ logger }),
    logger,
    now: () => 2,
    policy: defaultConfig().policy,
    tools: [],
    resolveGroups: async () => new Map([['S0SRE', new Set(sre)]]),
    loadThread: async () => structuredClone(stored),
    closeInterruptedCalls: createCloseInterruptedCalls({ store, logger }),
    runAndPublish: async (_scope, thread, _requesterId, runs?: ReadonlyMap<string, ApprovedRun>) => {
      turns.push({ messages: structuredClone(thread.messages), runs: [...(runs ?? new Map()).keys()] });
      await turn(thread);
    },
    // No resume is claimed inside these retries (no approval hook): none is left to finish.
    resumer: { finishInlineResume: async () => false },
    // The steps here are opened by `askedForApproval` and never get a card: each open one is unposted.
    cards: {
      postUnpostedCard: async (_scope, thread) => {
        if (thread.pendingStepId === undefined) return false;
        cardsPosted.push(thread.pendingStepId);
        return true;
      },
    },
  });
  const click: RetryWorkItem = { kind: 'retry', failureId: 'failure-1', clickedBy: step.requesterId, teamId: step.teamId, channel: step.channel, threadTs: step.threadTs };
  return {
    step,
    /** The step as stored now. */
    storedStep: () => step,
    click: () => retry(scope, click),
    /** What the next model turn does. */
    onTurn: (next: (thread: ThreadState) => Promise<void>) => {
      turn = next;
    },
    markStarted: (toolCallId: string) => markers.set(toolCallId, { toolName: 'restart_service', input: WORKER, startedAt: 2 }),
    bobLeavesSre: () => sre.delete('U0BOB'),
    /** The retried turn failed again: its failure is saved, its notice not posted yet. */
    failedAgain: async (thread: ThreadState) => {
      thread.failedTurn = newFailedTurn({ requesterId: step.requesterId, at: 2, notice: FAILED_AGAIN, retryOf: thread.failedTurn!.id });
      await scope.save(thread);
    },
    stored: () => stored,
    answered: async (thread: ThreadState) => {
      thread.messages.push({ role: 'assistant', content: 'Restarted.' });
      delete thread.failedTurn;
      await scope.save(thread);
    },
    /** The retried turn asked for another approval and saved its step; its card is not posted yet. */
    askedForApproval: async (thread: ThreadState) => {
      thread.messages.push({ role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'call_9', toolName: 'restart_service', input: API }] });
      thread.pendingStepId = options.openStep?.stepId;
      delete thread.failedTurn;
      await scope.save(thread);
    },
    turns,
    ephemerals,
    notices,
    audited,
    cardsPosted,
  };
}

/** Results the model will read for each call, by tool call id, in the last message of a turn's history. */
function resultsOf(messages: readonly ModelMessage[]): Record<string, string> {
  const last = messages.at(-1);
  if (last?.role !== 'tool') return {};
  return Object.fromEntries(last.content.flatMap((part) => (part.type === 'tool-result' && part.output.type === 'error-text' ? [[part.toolCallId, part.output.value]] : [])));
}

describe('Try again whose process stopped after the retry was taken in', () => {
  it('is finished by the process that takes the item over, with the call that had started reported interrupted, not run again', async () => {
    const thread = failedAfterApprovals();
    const [worker, api] = thread.step.calls.map((call) => call.toolCallId);
    // The worker's marker is written, then the process stops: by the marker, the restart may have run.
    thread.onTurn(async () => {
      thread.markStarted(worker!);
      throw new ProcessStopped();
    });
    await expect(thread.click()).rejects.toBeInstanceOf(ProcessStopped);

    thread.onTurn(thread.answered);
    await thread.click();
    expect(thread.ephemerals).toEqual([]);
    expect(thread.turns).toHaveLength(2);
    const takeover = thread.turns[1]!;
    expect(resultsOf(takeover.messages)).toEqual({ [worker!]: INTERRUPTED_CALL });
    // The worker has its result, so only the api's approval is judged again and run.
    expect(thread.turns[0]!.runs).toEqual([worker, api]);
    expect(takeover.runs).toEqual([api]);
  });

  it('still says there is nothing to retry to a later click once the retried turn has ended', async () => {
    const thread = failedAfterApprovals();
    thread.onTurn(thread.answered);
    await thread.click();
    await thread.click();
    expect(thread.turns).toHaveLength(1);
    expect(thread.ephemerals).toEqual([NOTHING_TO_RETRY]);
  });

  it('posts the card the retried turn asked for when its process stopped before posting it', async () => {
    const openStep = makeStep(['a9'], { requesterId: 'U0ALICE' });
    const thread = failedAfterApprovals({ openStep });
    thread.onTurn(async (state) => {
      await thread.askedForApproval(state);
      throw new ProcessStopped();
    });
    await expect(thread.click()).rejects.toBeInstanceOf(ProcessStopped);
    await thread.click();
    expect({ cards: thread.cardsPosted, turns: thread.turns.length, ephemerals: thread.ephemerals }).toEqual({ cards: [openStep.stepId], turns: 1, ephemerals: [] });
  });

  it('posts the notice of the retried turn failing again when its process stopped before posting it, and that failure can be retried', async () => {
    const thread = failedAfterApprovals();
    thread.onTurn(async (state) => {
      await thread.failedAgain(state);
      throw new ProcessStopped();
    });
    await expect(thread.click()).rejects.toBeInstanceOf(ProcessStopped);
    await thread.click();
    expect({ notices: thread.notices, turns: thread.turns.length, ephemerals: thread.ephemerals }).toEqual({ notices: [FAILED_AGAIN], turns: 1, ephemerals: [] });
    expect(thread.stored().failedTurn).toMatchObject({ retryOf: 'failure-1' });
    expect(thread.stored().failedTurn).not.toHaveProperty('unpostedNotice');
    // Posted now: another click for the first failure finds nothing more to show or retry.
    await thread.click();
    expect({ notices: thread.notices, ephemerals: thread.ephemerals }).toEqual({ notices: [FAILED_AGAIN], ephemerals: [NOTHING_TO_RETRY] });
  });
});

describe('Try again clicked again after a retry whose item failed once it was taken in', () => {
  it('judges the approvals again, as the first click did: an approver who left the group since runs nothing', async () => {
    const thread = failedAfterApprovals();
    // Taken in with both approvals holding, then the item fails (Redis) before the turn ends.
    thread.onTurn(async () => {
      throw new Error('Connection is closed.');
    });
    await expect(thread.click()).rejects.toThrow('Connection is closed.');
    expect(thread.turns[0]!.runs).toHaveLength(2);

    // Bob leaves @sre; the next handling fails on Redis too, after its save.
    thread.bobLeavesSre();
    await expect(thread.click()).rejects.toThrow('Connection is closed.');
    const again = thread.turns[1]!;
    expect(again.runs).toEqual([]);
    expect(JSON.stringify(again.messages.at(-1))).toContain('the approval by <@U0BOB> no longer holds');
    // Withdrawn in the save that audits it, and then no longer among the runs the retry carries.
    expect(thread.audited).toEqual([
      expect.objectContaining({ type: 'action-refused', action: 'retry', code: 'approval-revoked', userId: 'U0BOB', approvalId: 'a1' }),
      expect.objectContaining({ type: 'action-refused', action: 'retry', code: 'approval-revoked', userId: 'U0BOB', approvalId: 'a2' }),
    ]);
    expect(thread.stored().failedTurn?.retrying).toEqual({ approvedRuns: [] });
    // Closed on the step too, as a resume claim closes a revoked approval: its card no longer says "Approved by".
    expect(thread.storedStep().decisions).toEqual({
      a1: expect.objectContaining({ outcome: 'denied', userId: 'countersign', reason: expect.stringContaining('the approval by <@U0BOB> no longer holds') }),
      a2: expect.objectContaining({ outcome: 'denied', userId: 'countersign', reason: expect.stringContaining('the approval by <@U0BOB> no longer holds') }),
    });

    // A third handling neither withdraws nor audits them twice.
    thread.onTurn(thread.answered);
    await thread.click();
    expect(thread.turns[2]!.messages).toEqual(again.messages);
    expect(thread.audited).toHaveLength(2);
  });

  it('runs the approvals that still hold, with no second card', async () => {
    const thread = failedAfterApprovals();
    const calls = thread.step.calls.map((call) => call.toolCallId);
    thread.onTurn(async () => {
      throw new Error('Connection is closed.');
    });
    await expect(thread.click()).rejects.toThrow('Connection is closed.');
    thread.onTurn(thread.answered);
    await thread.click();
    expect({ runs: thread.turns[1]!.runs, audited: thread.audited, cards: thread.cardsPosted }).toEqual({ runs: calls, audited: [], cards: [] });
  });
});
