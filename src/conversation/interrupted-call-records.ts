import { answeredCallIdsOf } from '../agent/current-exchange.js';
import type { AuditEventInput } from '../audit/audit-event.js';
import type { ExecutingMarker } from '../store/state-store.js';
import type { ThreadState } from '../store/thread-state.js';

/** The audit trail's word for a call whose process stopped while it ran. */
export const INTERRUPTED_CALL_RECORD = 'The bot process stopped while this call was running: it may or may not have completed. It was not run again.';

/**
 * The outcome records of the calls a closing just told the model were interrupted: each call whose
 * executing marker is there (its `tool-started` is on record), without a `finishedAt` (a call that
 * returned has its `tool-executed` already, written with that), that had no result in `before` and
 * has one now (`before`: `answeredCallIdsOf` the history before it was closed). Without them the trail keeps a start with no outcome, and a reviewer cannot tell a
 * call that ran from one that never started, nor from one still running. Saved with the history
 * that closes the calls, once: the same save drops the markers (`settled`).
 */
export function interruptedCallRecords({ thread, before, markers }: { thread: ThreadState; before: ReadonlySet<string>; markers: ReadonlyMap<string, ExecutingMarker> }): AuditEventInput[] {
  const answered = answeredCallIdsOf(thread.messages);
  const where = { teamId: thread.teamId, channel: thread.channel, threadTs: thread.threadTs };
  return [...markers]
    .filter(([toolCallId, marker]) => marker.finishedAt === undefined && !before.has(toolCallId) && answered.has(toolCallId))
    .map(([toolCallId, marker]) => ({ type: 'tool-executed', ...where, toolName: marker.toolName, toolCallId, status: 'interrupted', error: INTERRUPTED_CALL_RECORD }));
}

