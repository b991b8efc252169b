import { randomUUID } from 'node:crypto';
import type { LanguageModel } from 'ai';
import type { Logger } from 'pino';
import { closingToolMessage, executedResultsMessage, resumeToolMessage } from '../agent/decision-messages.js';
import { applyEditsToHistory, editNotesFor, type EditNote } from '../agent/apply-edits.js';
import { closeDanglingToolCalls, parseHistory, trimHistory } from '../agent/history.js';
import { interruptedResults } from '../agent/interrupted-calls.js';
import { runTurn, TurnFailedError } from '../agent/run-turn.js';
import { crashPoint } from '../testing/crash-point.js';
import type { AutomaticApproval } from '../agent/tool-set.js';
import { grantAuditEvent, grantCovers } from '../approvals/grant.js';
import type { PendingStep } from '../approvals/pending-step.js';
import type { GroupMembers } from '../approvals/policy/approver-eligibility.js';
import { recheckApprovals } from '../approvals/recheck-approvals.js';
import type { PolicyConfig } from '../config/policy-config-schema.js';
import { buildApprovalCard } from '../slack/blocks/approval-card.js';
import { appendQuietly, type AuditLog } from '../audit/audit-log.js';
import type { StateStore } from '../store/state-store.js';
import { newThreadState, threadKeyOf, type ThreadAddress, type ThreadState } from '../store/thread-state.js';
import type { ToolDefinition } from '../tools/tool-definition.js';
import type { AnswerStream, ThreadMessenger } from './thread-messenger.js';
import { earlierMessagesContext, userMessage } from './user-messages.js';
import { buildPendingStep } from './build-pending-step.js';
import { shortError } from './short-error.js';
import type { MessageWorkItem, RetryWorkItem, WorkItem } from './work-item.js';

/** Enough to recognise a re-delivered item after a crash; older messages are long answered. */
const HANDLED_TS_KEPT = 50;

export interface ConversationLimits {
  maxSteps: number;
  /** Per model call; a server that hangs fails the turn (after retries) instead of the thread waiting forever. */
  modelTimeoutMs?: number;
  historyTtlMs: number;
  maxMessages: number;
  maxBytes: number;
}

export interface ConversationOptions {
  store: StateStore;
  messenger: ThreadMessenger;
  model: LanguageModel;
  instructions: string;
  tools: readonly ToolDefinition[];
  policy: PolicyConfig;
  /** Tool sources that are down right now (an MCP server that died), to say so in the thread. */
  toolProblems?: () => ReadonlyArray<{ source: string; message: string }>;
  /** Members of approver groups, to check approvals again at resume. */
  resolveGroups: (groupIds: readonly string[]) => Promise<GroupMembers>;
  limits: ConversationLimits;
  logger: Logger;
  audit: AuditLog;
  botUserId: string;
  now?: () => number;
  newStepId?: () => string;
}

export interface Conversation {
  /** Handles one queued item; the caller holds the thread's lock. */
  handle(item: WorkItem): Promise<void>;
}

export function createConversation(options: ConversationOptions): Conversation {
  const { store, messenger, logger, limits, audit } = options;
  const record = (event: Parameters<AuditLog['append']>[0]) => appendQuietly(audit, event, logger);
  const now = options.now ?? Date.now;
  const newStepId = options.newStepId ?? (() => randomUUID().replaceAll('-', ''));
  // Looked up per call: the tool list is live (MCP servers connect late and reconnect).
  const definitionOf = (toolName: string) => options.tools.find((tool) => tool.name === toolName);

  async function loadThread(address: ThreadAddress): Promise<ThreadState> {
    const threadKey = threadKeyOf(address);
    const stored = await store.getThread(threadKey);
    if (!stored) return newThreadState(address, now());
    const history = parseHistory(stored.messages);
    if (!history.valid) logger.warn({ event: 'history-invalid', threadKey }, 'stored history failed validation; starting fresh');
    return { ...stored, messages: history.messages };
  }

  async function saveThread(thread: ThreadState): Promise<void> {
    thread.messages = trimHistory(thread.messages, limits);
    thread.updatedAt = now();
    await store.saveThread(thread, limits.historyTtlMs);
  }

  async function refreshCard(step: PendingStep): Promise<void> {
    if (step.cardTs === undefined) return;
    try {
      await messenger.updateCard({ channel: step.channel, ts: step.cardTs, card: buildApprovalCard({ step }) });
    } catch (error) {
      logger.warn({ event: 'card-update-failed', stepId: step.stepId, err: error }, 'could not update approval card');
    }
  }

  async function handleMessage(item: MessageWorkItem): Promise<void> {
    const thread = await loadThread(item);
    // Already taken in by a process that stopped before finishing: continue its turn, don't add it again.
    if (thread.handledTs?.includes(item.ts)) return continueInterrupted(thread, item.userId);
    if (thread.messages.length === 0 && item.readEarlierMessages) {
      const earlier = await messenger.readThread({ channel: item.channel, threadTs: item.threadTs }).catch((error: unknown) => {
        logger.warn({ event: 'thread-read-failed', err: error }, 'could not read earlier thread messages');
        return [];
      });
      const context = earlierMessagesContext({ messages: earlier, excludeTs: item.ts, botUserId: options.botUserId });
      if (context) thread.messages.push(context);
    }
    if (thread.pendingStepId !== undefined) await settlePendingStep(thread, item.userId);
    // A half-written answer to an earlier message stays as it is; this message gets its own.
    delete thread.answerTs;
    thread.messages = closeDanglingToolCalls(thread.messages, 'Not run: the turn was interrupted before this call finished.');
    thread.messages.push(userMessage({ userId: item.userId, text: item.text }));
    thread.handledTs = [...(thread.handledTs ?? []), item.ts].slice(-HANDLED_TS_KEPT);
    // Saved before the model is asked, so the message (and any decision above) survives a crash.
    await saveThread(thread);
    await runAndPublish(thread, item.userId);
  }

  /**
   * Finishes a turn a stopped process left: an answer it saved but did not post is posted; a card
   * it never posted is posted; a history still waiting for the model is run again.
   */
  async function continueInterrupted(thread: ThreadState, requesterId: string): Promise<void> {
    if (thread.outbox !== undefined) return postOutbox(thread);
    if (thread.pendingStepId !== undefined) {
      const step = await store.getStep(thread.pendingStepId);
      if (step && step.cardTs === undefined && step.phase === 'pending') await postCardFor(step);
      return;
    }
    const last = thread.messages.at(-1);
    if (!last || (last.role !== 'user' && last.role !== 'tool')) return;
    await closeInterruptedCalls(thread);
    await runAndPublish(thread, requesterId);
  }

  /** Shows the saved answer: through the live stream when there is one, else rewriting what a dead process left. */
  async function postOutbox(thread: ThreadState, answer?: AnswerStream): Promise<void> {
    const markdown = thread.outbox;
    if (markdown === undefined) return;
    crashPoint('before-answer');
    if (answer) await answer.finish(markdown);
    else await messenger.postAnswer({ channel: thread.channel, threadTs: thread.threadTs, markdown, ...(thread.answerTs ? { replacing: thread.answerTs } : {}) });
    delete thread.outbox;
    delete thread.answerTs;
    await saveThread(thread);
  }

  /** A newer message closes the open card, unless every call was already decided: then it resumes first. */
  async function settlePendingStep(thread: ThreadState, userId: string): Promise<void> {
    const stepId = thread.pendingStepId as string;
    const superseded = await store.supersede(stepId, { outcome: 'superseded', userId, at: now() });
    if (superseded) {
      for (const call of superseded.calls) {
        const decision = superseded.decisions[call.approvalId];
        if (decision?.outcome !== 'superseded') continue;
        await record({ type: 'decision', teamId: superseded.teamId, stepId: superseded.stepId, approvalId: call.approvalId, toolName: call.toolName, outcome: 'superseded', userId, originalInput: call.input });
      }
      thread.messages.push(closingToolMessage(superseded));
      delete thread.pendingStepId;
      await refreshCard(superseded);
      return;
    }
    const claimed = await store.claimResume(stepId);
    if (claimed) {
      await resumeClaimed(thread, claimed);
      Object.assign(thread, await loadThread(thread));
      return;
    }
    delete thread.pendingStepId;
  }

  /**
   * Runs the turn again after a failure, from the stored history. Only when the history ends
   * waiting for the model (a user message, or tool results): anything else was already answered.
   */
  async function retry(item: RetryWorkItem): Promise<void> {
    const thread = await loadThread(item);
    const last = thread.messages.at(-1);
    if (thread.pendingStepId !== undefined || !last || (last.role !== 'user' && last.role !== 'tool')) {
      await messenger.postEphemeral({ channel: item.channel, userId: item.userId, threadTs: item.threadTs, text: 'There is nothing to retry here any more.' });
      return;
    }
    await closeInterruptedCalls(thread);
    await runAndPublish(thread, item.userId);
  }

  async function resume(stepId: string): Promise<void> {
    const step = await store.getStep(stepId);
    if (!step) return;
    const thread = await loadThread(step);
    if (thread.pendingStepId !== stepId) {
      if (step.phase === 'resumed') await recoverInterruptedResume(thread, step);
      return;
    }
    const claimed = await store.claimResume(stepId);
    if (!claimed) return;
    await resumeClaimed(thread, claimed);
  }

  /**
   * A process claimed this resume and stopped before finishing it. If the history still ends with
   * the step's decisions, the turn never completed: calls that had started executing are closed as
   * "interrupted" (they may have run; they must not run twice), the others run now.
   */
  async function recoverInterruptedResume(thread: ThreadState, step: PendingStep): Promise<void> {
    if (thread.outbox !== undefined) return postOutbox(thread);
    const last = thread.messages.at(-1);
    const approvalIds = new Set(step.calls.map((call) => call.approvalId));
    const isResumeMessage =
      last?.role === 'tool' && last.content.some((part) => part.type === 'tool-approval-response' && approvalIds.has(part.approvalId));
    if (!isResumeMessage) return;
    await closeInterruptedCalls(thread);
    await runAndPublish(thread, step.requesterId, editNotesFor(step));
  }

  /**
   * Before a history that ends with approvals is run again (recovery, Try again): approved calls
   * that had started executing but have no result get an "interrupted" result, so the AI SDK does
   * not run them a second time. Calls that never started still run.
   */
  async function closeInterruptedCalls(thread: ThreadState): Promise<void> {
    const results = interruptedResults(thread.messages, await store.executingCalls(thread.threadKey));
    const last = thread.messages.at(-1);
    if (results.length === 0 || last?.role !== 'tool') return;
    last.content.push(...results);
    logger.warn({ event: 'call-interrupted', threadKey: thread.threadKey, tools: results.map((result) => result.toolName) }, 'calls were running when their process stopped; not running them again');
    await saveThread(thread);
  }

  async function resumeClaimed(thread: ThreadState, claimed: PendingStep): Promise<void> {
    const { step, revoked } = await recheckApprovals({ step: claimed, resolveGroups: options.resolveGroups, now: now() });
    for (const revocation of revoked) {
      logger.warn({ event: 'approval-revoked', stepId: step.stepId, ...revocation }, 'approval no longer authorized at resume');
      const call = step.calls.find((candidate) => candidate.approvalId === revocation.approvalId);
      await record({ type: 'unauthorized-attempt', teamId: step.teamId, stepId: step.stepId, approvalId: revocation.approvalId, toolName: call?.toolName ?? 'unknown', userId: revocation.userId, action: 'resume', reason: revocation.reason });
    }
    if (stopsOnExpiry(step)) {
      // The policy says an unanswered request ends the turn: nothing runs and the model is not asked.
      thread.messages.push(closingToolMessage(step));
      delete thread.pendingStepId;
      await saveThread(thread);
      await messenger.postNotice({
        channel: thread.channel,
        threadTs: thread.threadTs,
        text: ':alarm_clock: The approval request expired without a decision, so nothing was run. Mention me to try again.',
      });
      return;
    }
    thread.messages = [...applyEditsToHistory(thread.messages, step), resumeToolMessage(step)];
    delete thread.pendingStepId;
    // Saved before anything runs, so the record of what was decided survives a failed turn.
    await saveThread(thread);
    logger.info({ event: 'turn-resumed', stepId: step.stepId, threadKey: thread.threadKey }, 'resuming turn');
    await runAndPublish(thread, step.requesterId, editNotesFor(step));
  }

  async function runAndPublish(thread: ThreadState, requesterId: string, edits?: ReadonlyMap<string, EditNote>): Promise<void> {
    const where = { channel: thread.channel, threadTs: thread.threadTs };
    await messenger.setStatus({ ...where, status: 'is thinking…' });
    await noteToolProblems(thread);
    const automatic: AutomaticApproval[] = [];
    let answer: AnswerStream | undefined;
    let streamed = '';
    const showDelta = (delta: string) => {
      streamed += delta;
      answer ??= messenger.startAnswer({
        ...where,
        recipientUserId: requesterId,
        recipientTeamId: thread.teamId,
        ...(thread.answerTs ? { replacing: thread.answerTs } : {}),
        onMessages: (ts) => {
          thread.answerTs = [...ts];
          saveThread(thread)
            .then(() => crashPoint('mid-answer'))
            .catch((error: unknown) => logger.warn({ event: 'answer-ts-save-failed', err: error }, 'could not record the answer messages'));
        },
      });
      answer.append(delta);
    };
    let outcome;
    try {
      outcome = await runTurn({
        model: options.model,
        instructions: options.instructions,
        definitions: options.tools,
        policy: options.policy,
        messages: thread.messages,
        context: { requesterId, teamId: thread.teamId, channel: thread.channel, threadTs: thread.threadTs },
        maxSteps: limits.maxSteps,
        onBeforeExecute: (toolCallId) => store.markExecuting(thread.threadKey, toolCallId, limits.historyTtlMs),
        ...(limits.modelTimeoutMs === undefined ? {} : { modelTimeoutMs: limits.modelTimeoutMs }),
        ...(edits ? { edits } : {}),
        onExecuted: (report) => {
          void record({ type: 'tool-executed', teamId: thread.teamId, channel: thread.channel, threadTs: thread.threadTs, ...report });
        },
        onAutomaticApproval: (approval) => automatic.push(approval),
        findGrant: async ({ toolName, input, evaluation }) => {
          const grants = await store.listGrants({ teamId: thread.teamId, channel: thread.channel, now: now() });
          return grants.find((grant) => grantCovers(grant, { toolName, channel: thread.channel, threadTs: thread.threadTs, input, evaluation, now: now() }));
        },
        onToolStart: (toolName) => messenger.setStatus({ ...where, status: `is running ${toolName}…` }),
        onTextDelta: showDelta,
      });
    } catch (error) {
      if (error instanceof TurnFailedError && error.executions.length > 0) thread.messages.push(executedResultsMessage(error.executions));
      // The model stopped mid-answer: what it wrote stays visible, marked as cut off.
      await answer?.finish(`${streamed} …`).catch((finishError: unknown) => logger.warn({ event: 'answer-finish-failed', err: finishError }, 'could not finish the partial answer'));
      delete thread.answerTs;
      await saveThread(thread);
      logger.error({ event: 'turn-failed', threadKey: thread.threadKey, err: error }, 'agent turn failed');
      await messenger.postNotice({
        ...where,
        text: `:warning: Sorry, I could not finish this: ${shortReason(error)}. Click *Try again* or send another message.`,
        retryButton: true,
      });
      return;
    }
    thread.messages.push(...outcome.responseMessages);
    await noteAutomaticApprovals(thread, automatic);
    if (outcome.approvalRequests.length === 0) {
      if (outcome.text.trim()) thread.outbox = outcome.text;
      try {
        await saveThread(thread);
      } catch (error) {
        // Shown but not remembered: marked as cut off, so no one mistakes it for an answer the bot knows it gave.
        await answer?.finish(`${streamed} …`).catch(() => {});
        throw error;
      }
      await postOutbox(thread, answer);
      return;
    }
    // The text before the card is shown in full first; a crash before the step is saved re-runs the turn.
    if (answer) await answer.finish(outcome.text);
    else if (outcome.text.trim()) await messenger.postAnswer({ ...where, markdown: outcome.text, ...(thread.answerTs ? { replacing: thread.answerTs } : {}) });
    delete thread.answerTs;

    const step = await buildPendingStep({
      thread,
      requesterId,
      requests: outcome.approvalRequests,
      policy: options.policy,
      definitionOf,
      stepId: newStepId(),
      botUserId: options.botUserId,
      now: now(),
    });
    thread.pendingStepId = step.stepId;
    // Stored before the card exists, so a click that arrives immediately finds its step.
    await store.createStep(step, limits.historyTtlMs);
    await saveThread(thread);
    await postCardFor(step);
  }

  /** Posts a step's card; if Slack refuses it, the step is closed so nothing waits on a card no one sees. */
  async function postCardFor(step: PendingStep): Promise<void> {
    try {
      const cardTs = await messenger.postCard({ channel: step.channel, threadTs: step.threadTs, card: buildApprovalCard({ step }) });
      await store.setStepCard(step.stepId, cardTs);
      for (const call of step.calls) {
        await record({
          type: 'approval-requested',
          teamId: step.teamId,
          stepId: step.stepId,
          approvalId: call.approvalId,
          toolName: call.toolName,
          input: call.input,
          requesterId: step.requesterId,
          channel: step.channel,
          threadTs: step.threadTs,
        });
      }
      logger.info({ event: 'approval-requested', stepId: step.stepId, calls: step.calls.map((call) => call.toolName) }, 'approval card posted');
    } catch (error) {
      logger.error({ event: 'card-post-failed', stepId: step.stepId, err: error }, 'could not post approval card');
      const closed = await store.supersede(step.stepId, { outcome: 'denied', userId: options.botUserId, at: now(), reason: 'the approval card could not be posted' });
      if (closed) {
        const thread = await loadThread(step);
        thread.messages.push(closingToolMessage(closed));
        delete thread.pendingStepId;
        await saveThread(thread);
      }
      await messenger.postNotice({ channel: step.channel, threadTs: step.threadTs, text: ':warning: I could not post the approval card, so nothing was run. Please try again.' });
    }
  }

  /** A tool source that is down is said once per thread: its tools will fail until it reconnects. */
  async function noteToolProblems(thread: ThreadState): Promise<void> {
    const problems = options.toolProblems?.() ?? [];
    const fresh = problems.filter((problem) => !thread.notedProblems?.includes(`${problem.source}: ${problem.message}`));
    if (fresh.length === 0) return;
    thread.notedProblems = [...(thread.notedProblems ?? []), ...fresh.map((problem) => `${problem.source}: ${problem.message}`)].slice(-20);
    await messenger
      .postNotice({
        channel: thread.channel,
        threadTs: thread.threadTs,
        text: fresh.map((problem) => `:electric_plug: ${problem.message} Its tools will fail until it is back; I keep retrying.`).join('\n'),
      })
      .catch((error: unknown) => logger.warn({ event: 'tool-problem-note-failed', err: error }, 'could not post tool source problem'));
  }

  /** Auto-approved calls ran without a card; each is audited and noted in one line in the thread. */
  async function noteAutomaticApprovals(thread: ThreadState, automatic: readonly AutomaticApproval[]): Promise<void> {
    if (automatic.length === 0) return;
    const lines: string[] = [];
    for (const approval of automatic) {
      const { grant } = approval;
      await record({
        type: 'auto-approved',
        teamId: thread.teamId,
        channel: thread.channel,
        threadTs: thread.threadTs,
        toolName: approval.toolName,
        input: approval.input,
        mode: approval.mode,
        ...(grant ? { grantId: grant.grantId } : {}),
      });
      if (grant) {
        await record(grantAuditEvent('grant-used', grant, grant.grantedBy));
      }
      lines.push(
        grant
          ? `:ticket: \`${approval.toolName}\` ran without a card: allowed by <@${grant.grantedBy}>'s grant for this ${grant.scope} until <!date^${Math.floor(grant.expiresAt / 1000)}^{date_short_pretty} at {time}|later> (\`/countersign grants\` to revoke).`
          : `:robot_face: \`${approval.toolName}\` ran without a card: auto-approve mode is on here.`,
      );
    }
    await messenger
      .postNotice({ channel: thread.channel, threadTs: thread.threadTs, text: [...new Set(lines)].join('\n') })
      .catch((error: unknown) => logger.warn({ event: 'auto-approve-note-failed', err: error }, 'could not post auto-approve note'));
  }

  return {
    async handle(item) {
      try {
        if (item.kind === 'message') await handleMessage(item);
        else if (item.kind === 'resume') await resume(item.stepId);
        else await retry(item);
      } catch (error) {
        // Usually the store or Slack failing mid-turn: say so in the thread rather than go quiet.
        logger.error({ event: 'work-item-failed', kind: item.kind, err: error }, 'could not handle work item');
        await messenger
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

function shortReason(error: unknown): string {
  return `the model request failed (${shortError(error instanceof TurnFailedError ? error.cause : error)})`;
}


/** Every call expired unanswered and their rules say expiry ends the turn (`onExpiry: stop`). */
function stopsOnExpiry(step: PendingStep): boolean {
  const outcomes = step.calls.map((call) => ({ call, decision: step.decisions[call.approvalId] }));
  if (!outcomes.some(({ decision }) => decision?.outcome === 'expired')) return false;
  return outcomes.every(({ call, decision }) => decision?.outcome === 'expired' ? (call.policy?.onExpiry ?? 'stop') === 'stop' : decision?.outcome !== 'approved' && decision?.outcome !== 'answered');
}
