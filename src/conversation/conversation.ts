import { randomUUID } from 'node:crypto';
import { approvedRunsFor } from '../agent/approved-runs.js';
import { closingToolMessage, resumeToolMessage } from '../agent/decision-messages.js';
import { closeDanglingToolCalls, parseHistory } from '../agent/history.js';
import { interruptedResults, recordUnrecordedCalls } from '../agent/interrupted-calls.js';
import { currentVersion } from '../approvals/input-version.js';
import type { PendingStep } from '../approvals/pending-step.js';
import { recheckApprovals } from '../approvals/recheck-approvals.js';
import { claimResumeTransition, supersedeTransition } from '../approvals/transitions/close-step.js';
import { commitTransition } from '../approvals/transitions/commit-transition.js';
import { appendQuietly, type AuditLog } from '../audit/audit-log.js';
import { isFencedError } from '../store/fenced-error.js';
import { newThreadState, threadKeyOf, type ThreadAddress, type ThreadState } from '../store/thread-state.js';
import type { Lease } from './lease.js';
import { judgeRetry } from './failed-turn.js';
import { createTurnRunner, type TurnRunnerOptions } from './run-and-publish.js';
import { faultPoint } from '../runtime/fault-points.js';
import { shortError } from './short-error.js';
import type { ThreadMessenger } from './thread-messenger.js';
import { createTurnScope, type TurnScope } from './turn-scope.js';
import { earlierMessagesContext, userMessage } from './user-messages.js';
import type { MessageWorkItem, RetryWorkItem, WorkItem } from './work-item.js';

/** Enough to recognise a re-delivered item after a crash; older messages are long answered. */
const HANDLED_TS_KEPT = 50;
/** People the model may mention in a thread; the oldest are forgotten first. */
const PARTICIPANTS_KEPT = 100;

export interface ConversationLimits {
  maxSteps: number;
  /** Per model call; a server that hangs fails the turn (after retries) instead of the thread waiting forever. */
  modelTimeoutMs?: number;
  historyTtlMs: number;
  maxMessages: number;
  maxBytes: number;
}

export type ConversationOptions = Omit<TurnRunnerOptions, 'limits' | 'now' | 'newStepId'> & {
  /** The Slack side; each work item uses it through its lease (see `fencedMessenger`). */
  messenger: ThreadMessenger;
  limits: ConversationLimits;
  audit: AuditLog;
  now?: () => number;
  newStepId?: () => string;
};

export interface Conversation {
  /** Handles one queued item while the caller holds the thread; every effect goes through `lease`. */
  handle(item: WorkItem, lease: Lease): Promise<void>;
}

export function createConversation(options: ConversationOptions): Conversation {
  const { store, logger, limits } = options;
  const now = options.now ?? Date.now;
  const runner = createTurnRunner({
    ...options,
    now,
    newStepId: options.newStepId ?? (() => randomUUID().replaceAll('-', '')),
  });

  async function loadThread(address: ThreadAddress): Promise<ThreadState> {
    const threadKey = threadKeyOf(address);
    const stored = await store.getThread(threadKey);
    if (!stored) return newThreadState(address, now());
    const history = parseHistory(stored.messages);
    if (!history.valid) logger.warn({ event: 'history-invalid', threadKey }, 'stored history failed validation; starting fresh');
    return { ...stored, messages: history.messages };
  }

  async function refreshCard(scope: TurnScope, step: PendingStep): Promise<void> {
    if (step.cardTs === undefined) return;
    try {
      await scope.messenger.updateStepCard({ step: { ...step, cardTs: step.cardTs } });
    } catch (error) {
      if (isFencedError(error)) throw error;
      logger.warn({ event: 'card-update-failed', stepId: step.stepId, err: error }, 'could not update approval card');
    }
  }

  async function handleMessage(scope: TurnScope, item: MessageWorkItem): Promise<void> {
    const thread = await loadThread(item);
    // Already taken in by a process that stopped before finishing: continue its turn, don't add it again.
    if (thread.handledTs?.includes(item.ts)) return continueInterrupted(scope, thread, item.userId);
    if (thread.messages.length === 0 && item.readEarlierMessages) {
      const earlier = await scope.messenger.readThread({ channel: item.channel, threadTs: item.threadTs }).catch((error: unknown) => {
        logger.warn({ event: 'thread-read-failed', err: error }, 'could not read earlier thread messages');
        return [];
      });
      const context = earlierMessagesContext({ messages: earlier, excludeTs: item.ts, botUserId: options.botUserId });
      if (context) thread.messages.push(context);
      addParticipants(thread, earlier.flatMap((message) => (message.fromBot || !message.userId ? [] : [message.userId])));
    }
    addParticipants(thread, [item.userId]);
    if (thread.pendingStepId !== undefined) await settlePendingStep(scope, thread, item.userId);
    // A half-written answer to an earlier message stays as it is; this message gets its own.
    delete thread.answerTs;
    delete thread.failedTurn;
    thread.messages = closeDanglingToolCalls(thread.messages, 'Not run: the turn was interrupted before this call finished.');
    thread.messages.push(userMessage({ userId: item.userId, text: item.text }));
    thread.handledTs = [...(thread.handledTs ?? []), item.ts].slice(-HANDLED_TS_KEPT);
    // Saved before the model is asked, so the message (and any decision above) survives a crash.
    await scope.save(thread);
    await runner.runAndPublish(scope, thread, item.userId);
  }

  /**
   * Finishes a turn a stopped process left: an answer it saved but did not post is posted; a card
   * it never posted is posted; a history still waiting for the model is run again, after what the
   * stopped process started is recorded so it is not started twice.
   */
  async function continueInterrupted(scope: TurnScope, thread: ThreadState, requesterId: string): Promise<void> {
    if (thread.outbox !== undefined) return runner.postOutbox(scope, thread);
    if (thread.pendingStepId !== undefined) {
      const step = await store.getStep(thread.pendingStepId);
      if (step && step.cardTs === undefined && step.phase === 'pending') await runner.postCardFor(scope, step);
      return;
    }
    const last = thread.messages.at(-1);
    if (!last || (last.role !== 'user' && last.role !== 'tool')) return;
    await closeInterruptedCalls(scope, thread);
    await runner.runAndPublish(scope, thread, requesterId);
  }

  /** A newer message closes the open card, unless every call was already decided: then it resumes first. */
  async function settlePendingStep(scope: TurnScope, thread: ThreadState, userId: string): Promise<void> {
    const stepId = thread.pendingStepId as string;
    const superseded = await scope.lease.guard(() =>
      commitTransition(store, stepId, (step) => {
        const transition = supersedeTransition(step, { userId, now: now() });
        return transition && { ...transition, fence: scope.lease.fence };
      }),
    );
    if (superseded) {
      thread.messages.push(closingToolMessage(superseded));
      delete thread.pendingStepId;
      await refreshCard(scope, superseded);
      return;
    }
    const claimed = await claimResume(scope, stepId);
    if (claimed) {
      await resumeClaimed(scope, thread, claimed);
      Object.assign(thread, await loadThread(thread));
      return;
    }
    delete thread.pendingStepId;
  }

  async function claimResume(scope: TurnScope, stepId: string): Promise<PendingStep | undefined> {
    const claimed = await scope.lease.guard(() => commitTransition(store, stepId, (step) => claimResumeTransition(step, scope.lease.fence)));
    if (claimed) faultPoint('after-claim');
    return claimed;
  }

  /**
   * Runs the turn again after a failure, from the stored history, for the requester of the turn
   * that failed (see `judgeRetry`). Only the failure the thread still has can be retried, once.
   */
  async function retry(scope: TurnScope, item: RetryWorkItem): Promise<void> {
    const thread = await loadThread(item);
    const last = thread.messages.at(-1);
    const waitingForModel = thread.pendingStepId === undefined && (last?.role === 'user' || last?.role === 'tool');
    const judgement = judgeRetry(waitingForModel ? thread.failedTurn : undefined, item);
    if (!judgement.allowed) {
      if (judgement.code === 'not-requester') {
        await appendQuietly(options.audit, { type: 'action-refused', teamId: thread.teamId, userId: item.clickedBy, action: 'retry', code: judgement.code, reason: judgement.message }, logger);
      }
      return scope.messenger.postEphemeral({ channel: item.channel, userId: item.clickedBy, threadTs: item.threadTs, text: judgement.message });
    }
    delete thread.failedTurn;
    await scope.save(thread);
    await closeInterruptedCalls(scope, thread);
    await runner.runAndPublish(scope, thread, judgement.requesterId);
  }

  async function resume(scope: TurnScope, stepId: string): Promise<void> {
    const step = await store.getStep(stepId);
    if (!step) return;
    const thread = await loadThread(step);
    if (thread.pendingStepId !== stepId) {
      if (step.phase === 'resumed') await recoverInterruptedResume(scope, thread, step);
      return;
    }
    const claimed = await claimResume(scope, stepId);
    if (!claimed) return;
    await resumeClaimed(scope, thread, claimed);
  }

  /**
   * A process claimed this resume and stopped before finishing it. If the history still ends with
   * the step's decisions, the turn never completed: calls that had started executing are closed as
   * "interrupted" (they may have run; they must not run twice), the others run now.
   */
  async function recoverInterruptedResume(scope: TurnScope, thread: ThreadState, step: PendingStep): Promise<void> {
    if (thread.outbox !== undefined) return runner.postOutbox(scope, thread);
    const last = thread.messages.at(-1);
    const approvalIds = new Set(step.calls.map((call) => call.approvalId));
    const isResumeMessage =
      last?.role === 'tool' && last.content.some((part) => part.type === 'tool-approval-response' && approvalIds.has(part.approvalId));
    if (!isResumeMessage) return;
    await closeInterruptedCalls(scope, thread);
    await runner.runAndPublish(scope, thread, step.requesterId, approvedRunsFor(step));
  }

  /**
   * Before a history is run again (recovery, Try again): calls that had started executing but have
   * no result get an "interrupted" result, so they are not run a second time; calls a stopped turn
   * started but never saved are written into the history the same way. Calls that never started run.
   */
  async function closeInterruptedCalls(scope: TurnScope, thread: ThreadState): Promise<void> {
    const markers = await store.executingCalls(thread.threadKey);
    if (markers.size === 0) return;
    const results = interruptedResults(thread.messages, new Set(markers.keys()));
    const last = thread.messages.at(-1);
    if (results.length > 0 && last?.role === 'tool') last.content.push(...results);
    const before = thread.messages.length;
    thread.messages = recordUnrecordedCalls(thread.messages, markers);
    if (results.length === 0 && thread.messages.length === before) return;
    logger.warn({ event: 'call-interrupted', threadKey: thread.threadKey }, 'calls were running when their process stopped; not running them again');
    await scope.save(thread, { settled: true });
  }

  async function resumeClaimed(scope: TurnScope, thread: ThreadState, claimed: PendingStep): Promise<void> {
    const { step, revoked } = await recheckApprovals({ step: claimed, resolveGroups: options.resolveGroups, now: now() });
    for (const revocation of revoked) {
      logger.warn({ event: 'approval-revoked', stepId: step.stepId, ...revocation }, 'approval no longer authorized at resume');
      const call = step.calls.find((candidate) => candidate.approvalId === revocation.approvalId);
      await appendQuietly(
        options.audit,
        { type: 'action-refused', teamId: step.teamId, stepId: step.stepId, approvalId: revocation.approvalId, toolName: call?.toolName ?? 'unknown', userId: revocation.userId, action: 'resume', code: 'approval-revoked', reason: revocation.reason },
        logger,
      );
    }
    addParticipants(thread, Object.values(step.decisions).flatMap((decision) => [decision.userId, ...(decision.approvedBy ?? [])]));
    if (stopsOnExpiry(step)) {
      // The policy says an unanswered request ends the turn: nothing runs and the model is not asked.
      thread.messages.push(closingToolMessage(step));
      delete thread.pendingStepId;
      await scope.save(thread, { settled: true });
      await scope.messenger.postNotice({
        channel: thread.channel,
        threadTs: thread.threadTs,
        text: ':alarm_clock: The approval request expired without a decision, so nothing was run. Mention me to try again.',
      });
      return;
    }
    // The model's calls stay in the history exactly as it made them; approved calls run with the
    // version their approvers signed (`approvedRunsFor`), and the result says so.
    thread.messages.push(resumeToolMessage(step));
    delete thread.pendingStepId;
    // Saved before anything runs, so the record of what was decided survives a failed turn.
    await scope.save(thread);
    logger.info({ event: 'turn-resumed', stepId: step.stepId, threadKey: thread.threadKey }, 'resuming turn');
    await runner.runAndPublish(scope, thread, step.requesterId, approvedRunsFor(step));
  }

  async function dispatch(scope: TurnScope, item: WorkItem): Promise<void> {
    if (item.kind === 'message') await handleMessage(scope, item);
    else if (item.kind === 'resume') await resume(scope, item.stepId);
    else await retry(scope, item);
  }

  return {
    async handle(item, lease) {
      const scope = createTurnScope({ store, messenger: options.messenger, lease, limits, now });
      try {
        await dispatch(scope, item);
      } catch (error) {
        // Another process holds the thread now: stop here, with nothing more said or saved.
        if (isFencedError(error) || lease.lost()) throw error;
        // Usually the store or Slack failing mid-turn: say so in the thread rather than go quiet.
        logger.error({ event: 'work-item-failed', kind: item.kind, err: error }, 'could not handle work item');
        await scope.messenger
          .postNotice({
            channel: item.channel,
            threadTs: item.threadTs,
            text: `:warning: Something went wrong on my side (${shortError(error)}), so I stopped here and nothing further was run. Please try again in a moment.`,
          })
          .catch(() => {});
      }
    },
  };
}

function addParticipants(thread: ThreadState, userIds: readonly string[]): void {
  const known = thread.participants ?? [];
  const fresh = userIds.filter((userId) => !known.includes(userId));
  if (fresh.length > 0) thread.participants = [...new Set([...known, ...fresh])].slice(-PARTICIPANTS_KEPT);
}

/** Every call expired unanswered and their rules say expiry ends the turn (`onExpiry: stop`). */
function stopsOnExpiry(step: PendingStep): boolean {
  const outcomes = step.calls.map((call) => ({ call, decision: step.decisions[call.approvalId] }));
  if (!outcomes.some(({ decision }) => decision?.outcome === 'expired')) return false;
  return outcomes.every(({ call, decision }) =>
    decision?.outcome === 'expired' ? ((currentVersion(call)?.policy ?? call.policy)?.onExpiry ?? 'stop') === 'stop' : decision?.outcome !== 'approved' && decision?.outcome !== 'answered',
  );
}
