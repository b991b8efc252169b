import { appendQuietly } from '../audit/audit-log.js';
import type { CloseInterruptedCalls } from './close-interrupted-calls.js';
import { judgeRetry } from './failed-turn.js';
import type { PhaseDependencies } from './phase-dependencies.js';
import type { RunAndPublish } from './run-and-publish.js';
import type { LoadThread } from './thread-loader.js';
import type { TurnScope } from './turn-scope.js';
import type { RetryWorkItem } from './work-item.js';

type RetryDependencies = Pick<PhaseDependencies, 'audit' | 'logger'> & {
  loadThread: LoadThread;
  runAndPublish: RunAndPublish;
  closeInterruptedCalls: CloseInterruptedCalls;
};

/**
 * Runs the turn again after a failure, from the stored history, for the requester of the turn
 * that failed (see `judgeRetry`). Only the failure the thread still has can be retried, once.
 */
export function createRetryFailedTurn({ audit, logger, loadThread, runAndPublish, closeInterruptedCalls }: RetryDependencies) {
  return async (scope: TurnScope, item: RetryWorkItem): Promise<void> => {
    const thread = await loadThread(item);
    const last = thread.messages.at(-1);
    const waitingForModel = thread.pendingStepId === undefined && (last?.role === 'user' || last?.role === 'tool');
    const judgement = judgeRetry(waitingForModel ? thread.failedTurn : undefined, item);
    if (!judgement.allowed) {
      if (judgement.code === 'not-requester') {
        await appendQuietly(audit, { type: 'action-refused', teamId: thread.teamId, userId: item.clickedBy, action: 'retry', code: judgement.code, reason: judgement.message }, logger);
      }
      return scope.messenger.postEphemeral({ channel: item.channel, userId: item.clickedBy, threadTs: item.threadTs, text: judgement.message });
    }
    delete thread.failedTurn;
    await scope.save(thread);
    await closeInterruptedCalls(scope, thread);
    await runAndPublish(scope, thread, judgement.requesterId);
  };
}
