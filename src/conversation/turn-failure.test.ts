import type { ModelMessage } from 'ai';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { approvedCallsHistory } from '../agent/approved-history.test-support.js';
import { TurnFailedError } from '../agent/run-turn.js';
import type { ApprovedRun, ExecutionRecord } from '../agent/tool-set.js';
import { inputHash } from '../approvals/input-version.js';
import type { ExecutingMarker, StateStore } from '../store/state-store.js';
import { newThreadState, type ThreadState } from '../store/thread-state.js';
import type { LiveAnswer } from './live-answer.js';
import { createTurnFailure } from './turn-failure.js';
import type { TurnScope } from './turn-scope.js';

const approved = approvedCallsHistory({ request: 'deploy api and web', calls: [{ toolName: 'deploy', input: { service: 'api' } }, { toolName: 'deploy', input: { service: 'web' } }] });

/** Records a failed turn whose store holds `markers`, and says how the thread was saved. */
async function recordFailure(options: { markers: string[]; executions: ExecutionRecord[]; approvedRuns?: ReadonlyMap<string, ApprovedRun>; failedTurn?: ThreadState['failedTurn'] }) {
  const markers = new Map<string, ExecutingMarker>(options.markers.map((toolCallId) => [toolCallId, { toolName: 'deploy', input: {}, startedAt: 1 }]));
  const store = { executingCalls: async () => markers } as unknown as StateStore;
  const saves: Array<{ settled: boolean | undefined; messages: ModelMessage[]; failedTurn: ThreadState['failedTurn']; after?: 'the notice' }> = [];
  let noticePosted = false;
  const save = (thread: ThreadState, saveOptions?: { settled?: boolean }) =>
    void saves.push({ settled: saveOptions?.settled, messages: thread.messages, failedTurn: structuredClone(thread.failedTurn), ...(noticePosted ? { after: 'the notice' as const } : {}) });
  const scope = {
    save: async (thread: ThreadState, saveOptions?: { settled?: boolean }) => save(thread, saveOptions),
    saveAtEnd: save,
    messenger: { postNotice: async () => void (noticePosted = true) },
  } as unknown as TurnScope;
  const answer = { streamed: '', openNow: () => undefined } as unknown as LiveAnswer;
  const thread = { ...newThreadState({ teamId: 'T1', channel: 'C1', threadTs: '1.1' }, 1), messages: [...approved], ...(options.failedTurn ? { failedTurn: options.failedTurn } : {}) };
  const recordTurnFailure = createTurnFailure({ store, logger: pino({ level: 'silent' }), now: () => 2 });
  await recordTurnFailure(scope, thread, { error: new TurnFailedError({ cause: new Error('model exploded'), executions: options.executions }), requesterId: 'UALICE', answer, ...(options.approvedRuns ? { approvedRuns: options.approvedRuns } : {}) });
  return saves;
}

describe('recording a failed turn', () => {
  it('drops the executing markers only when every call that started has its result in the history', async () => {
    const executions: ExecutionRecord[] = [
      { toolCallId: 'c1', toolName: 'deploy', input: { service: 'api' }, output: { deployed: 'api' } },
      { toolCallId: 'c2', toolName: 'deploy', input: { service: 'web' }, error: 'socket hang up' },
    ];
    const [saved] = await recordFailure({ markers: ['c1', 'c2'], executions });
    expect(saved?.settled).toBe(true);
    expect(JSON.stringify(saved?.messages.at(-1))).toContain('may or may not have completed');
  });

  it('keeps them while a call that started has no result, so Try again reports it interrupted instead of running it', async () => {
    const [saved] = await recordFailure({ markers: ['c1', 'c2'], executions: [{ toolCallId: 'c1', toolName: 'deploy', input: { service: 'api' }, output: { deployed: 'api' } }] });
    expect(saved?.settled).toBe(false);
  });

  it('keeps the approvals of the calls that never started for Try again, and none of a call that ran', async () => {
    const approvedRun = (toolCallId: string, service: string): [string, ApprovedRun] => {
      const hash = inputHash({ service });
      const basis = { kind: 'approval' as const, stepId: 's1', approvalId: `a${toolCallId.slice(1)}`, version: 0, inputHash: hash, approvedBy: ['UBOB'] };
      return [toolCallId, { toolName: 'deploy', modelInputHash: hash, input: { service }, inputHash: hash, basis }];
    };
    const approvedRuns = new Map([approvedRun('c1', 'api'), approvedRun('c2', 'web')]);
    const [saved] = await recordFailure({ markers: ['c1'], executions: [{ toolCallId: 'c1', toolName: 'deploy', input: { service: 'api' }, output: { deployed: 'api' } }], approvedRuns });
    expect(saved?.failedTurn?.approvedCalls).toEqual([{ toolCallId: 'c2', toolName: 'deploy', stepId: 's1', approvalId: 'a2', version: 0, inputHash: inputHash({ service: 'web' }), approvedBy: ['UBOB'] }]);
  });

  it('of a retried turn, names the failure it retried and keeps its notice until it is posted', async () => {
    const retried = { id: 'failure-1', requesterId: 'UALICE', at: 1, retrying: { approvedRuns: [] } };
    const [saved, afterNotice, ...more] = await recordFailure({ markers: [], executions: [], failedTurn: retried });
    expect(saved?.failedTurn).toMatchObject({ retryOf: 'failure-1', unpostedNotice: expect.stringContaining('I could not finish this: the model request failed (model exploded)') });
    expect(saved?.failedTurn?.id).not.toBe('failure-1');
    expect({ after: afterNotice?.after, failedTurn: afterNotice?.failedTurn, more }).toEqual({ after: 'the notice', failedTurn: { ...saved?.failedTurn, unpostedNotice: undefined }, more: [] });
  });

  it('of a first turn, with nothing of a retry, keeps its notice until it is posted too', async () => {
    const [saved, afterNotice, ...more] = await recordFailure({ markers: [], executions: [] });
    expect(saved?.failedTurn).not.toHaveProperty('retryOf');
    expect(saved?.failedTurn?.unpostedNotice).toContain('I could not finish this: the model request failed (model exploded)');
    expect({ after: afterNotice?.after, failedTurn: afterNotice?.failedTurn, more }).toEqual({ after: 'the notice', failedTurn: { ...saved?.failedTurn, unpostedNotice: undefined }, more: [] });
  });
});
