import { describe, expect, it } from 'vitest';
import { approvedCallsHistory } from '../agent/approved-history.test-support.js';
import { answeredCallIdsOf } from '../agent/current-exchange.js';
import { closeUnansweredCalls } from '../agent/interrupted-calls.js';
import type { ExecutingMarker } from '../store/state-store.js';
import { newThreadState } from '../store/thread-state.js';
import { INTERRUPTED_CALL_RECORD, interruptedCallRecords } from './interrupted-call-records.js';

const address = { teamId: 'T1', channel: 'C1', threadTs: '1.0' };
const history = approvedCallsHistory({ request: 'restart both', calls: [{ toolName: 'restart', input: {} }, { toolName: 'restart', input: {} }] });
const started = (finishedAt?: number): ExecutingMarker => ({ toolName: 'restart', input: {}, startedAt: 1, ...(finishedAt === undefined ? {} : { finishedAt }) });

/** Closes the history's calls as a successor does, and returns the records that closing owes the trail. */
function close(markers: Map<string, ExecutingMarker>) {
  const thread = { ...newThreadState(address, 1), messages: history };
  const before = answeredCallIdsOf(thread.messages);
  thread.messages = closeUnansweredCalls(thread.messages, markers, 'Not run');
  return interruptedCallRecords({ thread, before, markers });
}

describe('interruptedCallRecords', () => {
  it('records the outcome of a started call the closing told as interrupted, and nothing for one that never started', () => {
    expect(close(new Map([['c1', started()]]))).toEqual([
      { type: 'tool-executed', ...address, toolName: 'restart', toolCallId: 'c1', status: 'interrupted', error: INTERRUPTED_CALL_RECORD },
    ]);
  });

  it('records nothing for a call that returned: its tool-executed was written with its finish', () => {
    expect(close(new Map([['c1', started(2)]]))).toEqual([]);
  });

  it('records nothing for a call whose result the history held already: its outcome is on record', () => {
    const thread = { ...newThreadState(address, 1), messages: closeUnansweredCalls(history, new Set(['c1']), 'Not run') };
    const markers = new Map([['c1', started()]]);
    expect(interruptedCallRecords({ thread, before: answeredCallIdsOf(thread.messages), markers })).toEqual([]);
  });
});
