import { randomUUID } from 'node:crypto';
import type { LanguageModel } from 'ai';
import type { Logger } from 'pino';
import { executedResultsMessage, closingToolMessage } from '../agent/decision-messages.js';
import { runTurn, TurnFailedError } from '../agent/run-turn.js';
import type { ApprovedRun, AutomaticApproval, StartingCall } from '../agent/tool-set.js';
import type { AuditEventInput } from '../audit/audit-event.js';
import { grantAuditEvent, grantCovers } from '../approvals/grant.js';
import { inputHash } from '../approvals/input-version.js';
import type { PendingStep } from '../approvals/pending-step.js';
import { approverGroupIds, type GroupMembers } from '../approvals/policy/approver-eligibility.js';
import { describeApprovers } from '../approvals/policy/describe-approvers.js';
import { closeStepTransition } from '../approvals/transitions/close-step.js';
import { commitTransition } from '../approvals/transitions/commit-transition.js';
import type { PolicyConfig } from '../config/policy-config-schema.js';
import type { StateStore } from '../store/state-store.js';
import type { ThreadState } from '../store/thread-state.js';
import { faultPoint } from '../runtime/fault-points.js';
import type { ToolDefinition } from '../tools/tool-definition.js';
import { buildPendingStep } from './build-pending-step.js';
import { shortError } from './short-error.js';
import type { AnswerStream } from './thread-messenger.js';
import type { HistoryLimits, TurnScope } from './turn-scope.js';

export interface TurnRunnerOptions {
  store: StateStore;
  model: LanguageModel;
  instructions: string;
  tools: readonly ToolDefinition[];
  policy: PolicyConfig;
  toolProblems?: () => ReadonlyArray<{ source: string; message: string }>;
  resolveGroups: (groupIds: readonly string[]) => Promise<GroupMembers>;
  limits: HistoryLimits & { maxSteps: number; modelTimeoutMs?: number };
  logger: Logger;
  botUserId: string;
  now: () => number;
  newStepId: () => string;
}

/**
 * Running the model for a thread and showing what came of it: the answer, a card for calls that
 * wait for people, or a short notice when it failed. Every effect goes through the item's scope.
 */
export function createTurnRunner(options: TurnRunnerOptions) {
  const { store, logger, limits, now } = options;
  // Looked up per call: the tool list is live (MCP servers connect late and reconnect).
  const definitionOf = (toolName: string) => options.tools.find((tool) => tool.name === toolName);

  /** Shows the saved answer: through the live stream when there is one, else rewriting what a dead process left. */
  async function postOutbox(scope: TurnScope, thread: ThreadState, answer?: AnswerStream): Promise<void> {
    const markdown = thread.outbox;
    if (markdown === undefined) return;
    faultPoint('before-answer');
    if (answer) await answer.finish(markdown);
    else await scope.messenger.postAnswer({ channel: thread.channel, threadTs: thread.threadTs, markdown, mentionableUserIds: mentionable(thread), ...(thread.answerTs ? { replacing: thread.answerTs } : {}) });
    delete thread.outbox;
    delete thread.answerTs;
    await scope.save(thread);
  }

  /** The marker and the `tool-started` record of why the call may run, written together just before it does. */
  async function markStarted(scope: TurnScope, thread: ThreadState, call: StartingCall, automatic: readonly AutomaticApproval[]): Promise<void> {
    const where = { teamId: thread.teamId, channel: thread.channel, threadTs: thread.threadTs };
    const audit: AuditEventInput[] = [{ type: 'tool-started', ...where, toolName: call.toolName, toolCallId: call.toolCallId, input: call.input, inputHash: inputHash(call.input), basis: call.basis }];
    const approval = automatic.find((candidate) => candidate.toolCallId === call.toolCallId);
    if (approval) {
      audit.push({ type: 'auto-approved', ...where, toolName: approval.toolName, input: approval.input, mode: approval.mode, ...(approval.grant ? { grantId: approval.grant.grantId } : {}) });
      if (approval.grant) audit.push(grantAuditEvent('grant-used', approval.grant, approval.grant.grantedBy));
    }
    faultPoint('before-tool');
    await scope.lease.guard(() =>
      store.markExecuting({ fence: scope.lease.fence, toolCallId: call.toolCallId, marker: { toolName: call.toolName, input: call.input, startedAt: now() }, ttlMs: limits.historyTtlMs, audit }),
    );
    faultPoint('after-marker');
    // The marker was written while this process held the thread; it may have stalled since.
    await scope.lease.assertHeld();
  }

  /**
   * Runs the turn and shows its outcome. If this process turns out to have been fenced meanwhile,
   * answer messages it posted but never recorded are removed: the process that took the thread
   * over did not know them and wrote the answer again, so they would be a second answer.
   */
  async function runAndPublish(scope: TurnScope, thread: ThreadState, requesterId: string, approvedRuns?: ReadonlyMap<string, ApprovedRun>): Promise<void> {
    const shown: ShownAnswer = { recorded: new Set(thread.answerTs ?? []) };
    try {
      await runAndShow(scope, thread, requesterId, shown, approvedRuns);
    } catch (error) {
      if (scope.lease.lost() && shown.stream) {
        // Lets a post still in flight land (the stream's own writes are refused from here on), so
        // its message is known and can be removed too.
        await shown.stream.finish('').catch(() => {});
        const unrecorded = shown.stream.messageTs().filter((ts) => !shown.recorded.has(ts));
        if (unrecorded.length > 0) await scope.messenger.deleteMessages({ channel: thread.channel, ts: unrecorded });
      }
      throw error;
    }
  }

  async function runAndShow(scope: TurnScope, thread: ThreadState, requesterId: string, shown: ShownAnswer, approvedRuns?: ReadonlyMap<string, ApprovedRun>): Promise<void> {
    const { messenger } = scope;
    const where = { channel: thread.channel, threadTs: thread.threadTs };
    await messenger.setStatus({ ...where, status: 'is thinking…' });
    await noteToolProblems(scope, thread);
    const automatic: AutomaticApproval[] = [];
    let answer: AnswerStream | undefined;
    let streamed = '';
    const showDelta = (delta: string) => {
      streamed += delta;
      answer ??= shown.stream = messenger.startAnswer({
        ...where,
        recipientUserId: requesterId,
        recipientTeamId: thread.teamId,
        mentionableUserIds: mentionable(thread),
        ...(thread.answerTs ? { replacing: thread.answerTs } : {}),
        onMessages: (ts) => {
          thread.answerTs = [...ts];
          scope
            .save(thread)
            .then(() => {
              for (const each of ts) shown.recorded.add(each);
              faultPoint('mid-answer');
            })
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
        ...(limits.modelTimeoutMs === undefined ? {} : { modelTimeoutMs: limits.modelTimeoutMs }),
        ...(approvedRuns ? { approvedRuns } : {}),
        // Ends the turn (its model calls, its tools) the moment this process learns it was fenced.
        abortSignal: scope.lease.signal,
        beforeExecute: (call) => markStarted(scope, thread, call, automatic),
        afterExecute: async (report) => {
          await store
            .finishExecuting({
              threadKey: thread.threadKey,
              toolCallId: report.toolCallId,
              marker: { toolName: report.toolName, input: null, startedAt: now() - report.durationMs, finishedAt: now() },
              audit: { type: 'tool-executed', teamId: thread.teamId, channel: thread.channel, threadTs: thread.threadTs, ...report },
            })
            .catch((error: unknown) => logger.error({ event: 'tool-executed-record-failed', err: error }, 'could not record that a tool ran'));
          // A call can take long, or the process stall while it runs: before asking the model
          // anything more, make sure this process still holds the thread.
          await scope.lease.assertCurrent().catch(() => {});
        },
        onAutomaticApproval: (approval) => automatic.push(approval),
        findGrant: async ({ toolName, input, evaluation }) => {
          const grants = await store.listGrants({ teamId: thread.teamId, channel: thread.channel, now: now() });
          if (grants.length === 0) return undefined;
          const groupMembers = await options.resolveGroups(approverGroupIds(evaluation));
          const candidate = { toolName, channel: thread.channel, threadTs: thread.threadTs, input, evaluation, requesterId, groupMembers, now: now() };
          return grants.find((grant) => grantCovers(grant, candidate));
        },
        onToolStart: (toolName) => messenger.setStatus({ ...where, status: `is running ${toolName}…` }),
        onTextDelta: showDelta,
      });
    } catch (error) {
      // Fenced: another process has the thread; this one must not save, post or say anything.
      if (scope.lease.lost()) throw error;
      if (error instanceof TurnFailedError && error.executions.length > 0) thread.messages.push(executedResultsMessage(error.executions));
      // The model stopped mid-answer: what it wrote stays visible, marked as cut off.
      await answer?.finish(`${streamed} …`).catch((finishError: unknown) => logger.warn({ event: 'answer-finish-failed', err: finishError }, 'could not finish the partial answer'));
      delete thread.answerTs;
      // Try again runs the turn again for the same requester, whoever clicks it.
      thread.failedTurn = { id: randomUUID(), requesterId, at: now() };
      await scope.save(thread, { settled: true });
      logger.error({ event: 'turn-failed', threadKey: thread.threadKey, err: error }, 'agent turn failed');
      await messenger.postNotice({
        ...where,
        text: `:warning: Sorry, I could not finish this: ${shortReason(error)}. Click *Try again* or send another message.`,
        retryButton: true,
      });
      return;
    }
    thread.messages.push(...outcome.responseMessages);
    delete thread.failedTurn;
    await noteAutomaticApprovals(scope, thread, automatic);
    if (outcome.approvalRequests.length === 0) {
      if (outcome.text.trim()) thread.outbox = outcome.text;
      try {
        await scope.save(thread, { settled: true });
        for (const each of thread.answerTs ?? []) shown.recorded.add(each);
      } catch (error) {
        // Shown but not remembered: marked as cut off, so no one mistakes it for an answer the bot knows it gave.
        if (!scope.lease.lost()) await answer?.finish(`${streamed} …`).catch(() => {});
        throw error;
      }
      await postOutbox(scope, thread, answer);
      return;
    }
    // The text before the card is shown in full first; a crash before the step is saved re-runs the turn.
    if (answer) await answer.finish(outcome.text);
    else if (outcome.text.trim()) await messenger.postAnswer({ ...where, markdown: outcome.text, mentionableUserIds: mentionable(thread), ...(thread.answerTs ? { replacing: thread.answerTs } : {}) });
    delete thread.answerTs;

    const step = await buildPendingStep({
      thread,
      requesterId,
      requests: outcome.approvalRequests,
      policy: options.policy,
      definitionOf,
      stepId: options.newStepId(),
      botUserId: options.botUserId,
      now: now(),
    });
    thread.pendingStepId = step.stepId;
    thread.updatedAt = now();
    // The step, the thread that points at it and the `approval-requested` records are one write,
    // made before the card exists, so a click that arrives immediately finds its step.
    await scope.lease.guard(() => store.createStep({ step, thread, ttlMs: limits.historyTtlMs, audit: approvalRequested(step), fence: scope.lease.fence }));
    await postCardFor(scope, step);
  }

  /** Posts a step's card; if Slack refuses it, the step is closed so nothing waits on a card no one sees. */
  async function postCardFor(scope: TurnScope, step: PendingStep): Promise<void> {
    try {
      const cardTs = await scope.messenger.postStepCard({ step });
      await store.setStepCard(step.stepId, cardTs);
      logger.info({ event: 'approval-requested', stepId: step.stepId, calls: step.calls.map((call) => call.toolName) }, 'approval card posted');
    } catch (error) {
      if (scope.lease.lost()) throw error;
      logger.error({ event: 'card-post-failed', stepId: step.stepId, err: error }, 'could not post approval card');
      const decision = { outcome: 'denied' as const, userId: options.botUserId, at: now(), reason: 'the approval card could not be posted' };
      const closed = await scope.lease.guard(() =>
        commitTransition(store, step.stepId, (current) => {
          const transition = closeStepTransition(current, decision);
          return transition && { ...transition, fence: scope.lease.fence };
        }),
      );
      if (closed) {
        const thread = await store.getThread(step.threadKey);
        if (thread) {
          thread.messages.push(closingToolMessage(closed));
          delete thread.pendingStepId;
          await scope.save(thread, { settled: true });
        }
      }
      await scope.messenger.postNotice({ channel: step.channel, threadTs: step.threadTs, text: ':warning: I could not post the approval card, so nothing was run. Please try again.' });
    }
  }

  /** A tool source that is down is said once per thread: its tools will fail until it reconnects. */
  async function noteToolProblems(scope: TurnScope, thread: ThreadState): Promise<void> {
    const problems = options.toolProblems?.() ?? [];
    const fresh = problems.filter((problem) => !thread.notedProblems?.includes(`${problem.source}: ${problem.message}`));
    if (fresh.length === 0) return;
    thread.notedProblems = [...(thread.notedProblems ?? []), ...fresh.map((problem) => `${problem.source}: ${problem.message}`)].slice(-20);
    await scope.messenger
      .postNotice({
        channel: thread.channel,
        threadTs: thread.threadTs,
        text: fresh.map((problem) => `:electric_plug: ${problem.message} Its tools will fail until it is back; I keep retrying.`).join('\n'),
      })
      .catch((error: unknown) => {
        if (scope.lease.lost()) throw error;
        logger.warn({ event: 'tool-problem-note-failed', err: error }, 'could not post tool source problem');
      });
  }

  /** Auto-approved calls ran without a card (their audit records went with their markers); one line in the thread says so. */
  async function noteAutomaticApprovals(scope: TurnScope, thread: ThreadState, automatic: readonly AutomaticApproval[]): Promise<void> {
    if (automatic.length === 0) return;
    const lines = automatic.map(({ toolName, grant }) =>
      grant
        ? `:ticket: \`${toolName}\` ran without a card: allowed by <@${grant.grantedBy}>'s grant for this ${grant.scope} until <!date^${Math.floor(grant.expiresAt / 1000)}^{date_short_pretty} at {time}|later> (\`/countersign grants\` to revoke).`
        : `:robot_face: \`${toolName}\` ran without a card: auto-approve mode is on here.`,
    );
    await scope.messenger.postNotice({ channel: thread.channel, threadTs: thread.threadTs, text: [...new Set(lines)].join('\n') }).catch((error: unknown) => {
      if (scope.lease.lost()) throw error;
      logger.warn({ event: 'auto-approve-note-failed', err: error }, 'could not post auto-approve note');
    });
  }

  return { runAndPublish, postCardFor, postOutbox };
}

export type TurnRunner = ReturnType<typeof createTurnRunner>;

/** The answer a turn is showing, and which of its messages the thread has on record. */
interface ShownAnswer {
  stream?: AnswerStream;
  recorded: Set<string>;
}

/** The `approval-requested` records of a new step, one per call, written with the step. */
function approvalRequested(step: PendingStep): AuditEventInput[] {
  return step.calls.map((call) => ({
    type: 'approval-requested',
    teamId: step.teamId,
    stepId: step.stepId,
    approvalId: call.approvalId,
    toolName: call.toolName,
    input: call.input,
    requesterId: step.requesterId,
    channel: step.channel,
    threadTs: step.threadTs,
    ...(call.policy ? { approvers: describeApprovers(call.policy) } : {}),
    ...(step.expiresAt === undefined ? {} : { expiresAt: step.expiresAt }),
  }));
}

/** The model may notify the people already in the thread (its authors and deciders), and no one else. */
function mentionable(thread: ThreadState): readonly string[] {
  return thread.participants ?? [];
}

function shortReason(error: unknown): string {
  return `the model request failed (${shortError(error instanceof TurnFailedError ? error.cause : error)})`;
}
