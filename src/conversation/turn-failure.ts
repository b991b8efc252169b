import { approvedRunsAwaiting } from '../agent/approved-runs.js';
import { recordExecutions } from '../agent/executed-calls.js';
import { startedWithoutResult } from '../agent/interrupted-calls.js';
import { TurnFailedError } from '../agent/run-turn.js';
import type { ApprovedRun, ExecutionRecord } from '../agent/tool-set.js';
import type { ThreadState } from '../store/thread-state.js';
import { carriedApprovals } from './carried-approvals.js';
import { newFailedTurn, postFailureNotice, retriedFailureId } from './failed-turn.js';
import type { LiveAnswer } from './live-answer.js';
import type { PhaseDependencies } from './phase-dependencies.js';
import { shortError } from './short-error.js';
import type { TurnScope } from './turn-scope.js';

/**
 * A model turn failed (not fenced): the results of calls that already ran, or started and threw,
 * are kept so they never run again, what was streamed stays visible marked as cut off, and the
 * thread gets a Try again button that runs the turn again for the same requester, whoever clicks it.
 * Approvals humans gave for calls that never started are kept with the failure: without them Try
 * again would find those calls approved in the history and nothing to run them on.
 */
export function createTurnFailure({ store, logger, now }: Pick<PhaseDependencies, 'store' | 'logger' | 'now'>) {
  /**
   * The calls whose executing marker was written, or undefined when they could not be read. Only
   * with them may the save drop the markers, once every one has its result in the history: a
   * marker left in place is what tells Try again (or the next message) that its call started, so
   * it is reported as interrupted instead of being run again.
   */
  async function startedCalls(thread: ThreadState): Promise<ReadonlySet<string> | undefined> {
    try {
      return new Set((await store.executingCalls(thread.threadKey)).keys());
    } catch (error) {
      logger.warn({ event: 'executing-calls-read-failed', err: error }, 'could not read which calls started; keeping their markers');
      return undefined;
    }
  }

  /** `approvedRuns`: what the failed turn resumed with (see `approvedRunsFor`). */
  return async function recordTurnFailure(
    scope: TurnScope,
    thread: ThreadState,
    failure: { error: unknown; requesterId: string; answer: LiveAnswer; approvedRuns?: ReadonlyMap<string, ApprovedRun> },
  ): Promise<void> {
    const { error, answer } = failure;
    const started = await startedCalls(thread);
    if (error instanceof TurnFailedError) thread.messages = recordExecutions(thread.messages, error.executions, started === undefined ? {} : { started });
    const approvedCalls = carriedApprovals(approvedRunsAwaiting({ runs: failure.approvedRuns ?? new Map(), messages: thread.messages }));
    // Text that came before the failure is shown, marked as cut off, even if its stream had not opened yet.
    await answer.openNow()?.finish(`${answer.streamed} …`).catch((finishError: unknown) => logger.warn({ event: 'answer-finish-failed', err: finishError }, 'could not finish the partial answer'));
    delete thread.answerTs;
    const notice = `:warning: Sorry, I could not finish this: ${shortReason(error)}. Click *Try again* or send another message.`;
    const retryOf = retriedFailureId(thread.failedTurn);
    thread.failedTurn = newFailedTurn({ requesterId: failure.requesterId, at: now(), notice, approvedCalls, ...(retryOf === undefined ? {} : { retryOf }) });
    const settled = started !== undefined && startedWithoutResult(thread.messages, started).length === 0;
    await scope.save(thread, { settled });
    logger.error({ event: 'turn-failed', threadKey: thread.threadKey, err: error, ...(error instanceof TurnFailedError ? { calls: callSummary(error.executions) } : {}) }, 'agent turn failed');
    await postFailureNotice(scope, thread, { text: notice, settled });
  };
}

/**
 * Which calls ran before the failure, for the log: ids, names and whether each threw, and
 * `started: false` for one refused before its start, which did not run. Never their inputs or
 * outputs, which the audit trail keeps (inputs redacted) for the people allowed to read it.
 */
function callSummary(executions: readonly ExecutionRecord[]): Array<{ toolCallId: string; toolName: string; failed: boolean; started?: false }> {
  return executions.map((execution) => ({
    toolCallId: execution.toolCallId,
    toolName: execution.toolName,
    failed: 'error' in execution,
    ...(execution.started === false ? { started: false as const } : {}),
  }));
}

function shortReason(error: unknown): string {
  return `the model request failed (${shortError(error instanceof TurnFailedError ? error.cause : error)})`;
}
