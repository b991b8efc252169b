import { answeredCallIdsOf } from '../agent/current-exchange.js';
import { interruptedResults, recordUnrecordedCalls } from '../agent/interrupted-calls.js';
import type { ThreadState } from '../store/thread-state.js';
import { interruptedCallRecords } from './interrupted-call-records.js';
import type { PhaseDependencies } from './phase-dependencies.js';
import type { TurnScope } from './turn-scope.js';

export type CloseInterruptedCalls = (scope: TurnScope, thread: ThreadState) => Promise<void>;

/**
 * Before a history is run again (recovery, Try again): calls that had started executing but have
 * no result get an "interrupted" result, so they are not run a second time; calls a stopped turn
 * started but never saved are written into the history the same way. Calls that never started run.
 * Each interrupted call's outcome is recorded in the audit trail (`interruptedCallRecords`).
 */
export function createCloseInterruptedCalls({ store, logger }: Pick<PhaseDependencies, 'store' | 'logger'>): CloseInterruptedCalls {
  return async (scope, thread) => {
    const markers = await store.executingCalls(thread.threadKey);
    if (markers.size === 0) return;
    const answeredBefore = answeredCallIdsOf(thread.messages);
    const results = interruptedResults(thread.messages, new Set(markers.keys()));
    const last = thread.messages.at(-1);
    if (results.length > 0 && last?.role === 'tool') last.content.push(...results);
    const before = thread.messages.length;
    thread.messages = recordUnrecordedCalls(thread.messages, markers);
    if (results.length === 0 && thread.messages.length === before) return;
    logger.warn({ event: 'call-interrupted', threadKey: thread.threadKey }, 'calls were running when their process stopped; not running them again');
    // Their outcome goes in the trail with the history that closes them, and the markers go.
    await scope.save(thread, { settled: true, audit: interruptedCallRecords({ thread, before: answeredBefore, markers }) });
  };
}
