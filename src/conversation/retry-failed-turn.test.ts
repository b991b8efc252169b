import type { ModelMessage } from 'ai';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { INTERRUPTED_CALL } from '../agent/interrupted-calls.js';
import { resumeToolMessage } from '../agent/decision-messages.js';
import type { ApprovedRun } from '../agent/tool-set.js';
import { inputHash } from '../approvals/input-version.js';
import type { PendingStep } from '../approvals/pending-step.js';
import { makeStep } from '../approvals/pending-step.test-support.js';
import { createMemoryAuditLog } from '../audit/memory-audit-log.js';
import { defaultConfig } from '../config/config-file.js';
import type { ExecutingMarker, StateStore } from '../store/state-store.js';
import { newThreadState, type CarriedApproval, type ThreadState } from '../store/thread-state.js';
import { createCloseInterruptedCalls } from './close-interrupted-calls.js';
import { createRetryFailedTurn } from './retry-failed-turn.js';
import type { TurnScope } from './turn-scope.js';
import type { RetryWorkItem } from './work-item.js';

const NOTHING_TO_RETRY = 'There is nothing to retry here any more.';
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
  const resumed = makeStep(
    [
      { approvalId: 'a1', input: WORKER },
      { approvalId: 'a2', input: API },
    ],
    { phase: 'resumed' },
  );
  const step: PendingStep = { ...resumed, decisions: { a1: APPROVED_BY_BOB(WORKER), a2: APPROVED_BY_BOB(API) } };
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
  } as unknown as StateStore;
  const ephemerals: string[] = [];
  const scope = {
    lease: { fence: { threadKey: stored.threadKey, token: '1' } },
    messenger: { postEphemeral: async ({ text }: { text: string }) => void ephemerals.push(text) },
    save: async (thread: ThreadState) => {
      stored = structuredClone(thread);
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
    resolveGroups: async () => new Map(),
    loadThread: async () => structuredClone(stored),
    closeInterruptedCalls: createCloseInterruptedCalls({ store, logger }),
    runAndPublish: async (_scope, thread, _requesterId, runs?: ReadonlyMap<string, ApprovedRun>) => {
      turns.push({ messages: structuredClone(thread.messages), runs: [...(runs ?? new Map()).keys()] });
      await turn(thread);
    },
    cards: { postCardFor: async (_scope, card) => void cardsPosted.push(card.stepId) },
  });
  const click: RetryWorkItem = { kind: 'retry', failureId: 'failure-1', clickedBy: step.requesterId, teamId: step.teamId, channel: step.channel, threadTs: step.threadTs };
  return {
    step,
    click: () => retry(scope, click),
    /** What the next model turn does. */
    onTurn: (next: (thread: ThreadState) => Promise<void>) => {
      turn = next;
    },
    markStarted: (toolCallId: string) => markers.set(toolCallId, { toolName: 'restart_service', input: WORKER, startedAt: 2 }),
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
    // The approvals judged at the click, not judged again; the worker has its result, so only the api runs.
    expect(thread.turns[0]!.runs).toEqual([worker, api]);
    expect(takeover.runs).toEqual([worker, api]);
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
});
