import type { ModelMessage } from 'ai';
import { describe, expect, it } from 'vitest';
import { answeredCallThenMessage, approvedCallsHistory } from './approved-history.test-support.js';
import { NOT_STARTED_CALL, RESULT_LOST_CALL, recordExecutions } from './executed-calls.js';

const resumed = approvedCallsHistory({ request: 'deploy api and restart web', calls: [{ toolName: 'deploy', input: { service: 'api' } }, { toolName: 'restart', input: { service: 'web' } }] });

describe('recordExecutions', () => {
  it('answers approved calls that returned or threw next to their approvals, so Try again replays neither', () => {
    const recorded = recordExecutions(resumed, [
      { toolCallId: 'c1', toolName: 'deploy', input: { service: 'api' }, error: 'socket hang up\nat stack' },
      { toolCallId: 'c2', toolName: 'restart', input: { service: 'web' }, output: { restarted: true } },
    ]);
    expect(recorded).toHaveLength(resumed.length);
    expect(recorded.at(-1)).toEqual({
      role: 'tool',
      content: [
        ...(resumed.at(-1)!.content as unknown[]),
        { type: 'tool-result', toolCallId: 'c1', toolName: 'deploy', output: { type: 'error-text', value: expect.stringMatching(/^Failed after it started \(socket hang up\), so it may or may not have completed/) } },
        { type: 'tool-result', toolCallId: 'c2', toolName: 'restart', output: { type: 'json', value: { restarted: true } } },
      ],
    });
    // The stored history is not changed in place.
    expect(resumed.at(-1)!.content).toHaveLength(2);
  });

  it("writes calls the failed turn made itself as the model's calls, with their results", () => {
    const fresh: ModelMessage[] = [{ role: 'user', content: 'restart web' }];
    const recorded = recordExecutions(fresh, [{ toolCallId: 'c7', toolName: 'restart', input: { service: 'web' }, output: 'ok' }]);
    expect(recorded.slice(1)).toEqual([
      { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'c7', toolName: 'restart', input: { service: 'web' } }] },
      { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'c7', toolName: 'restart', output: { type: 'json', value: 'ok' } }] },
    ]);
    expect(recordExecutions(fresh, [])).toEqual(fresh);
  });

  describe('a resumed step whose turn ran a further call before failing', () => {
    const declined = 'Declined by <@UBOB>. This is a human decision, not an error: do not retry this call unless the user asks again.';
    // c1 denied, c2 approved but never started (its marker write failed), then the model listed the pods (c3).
    const decided: ModelMessage[] = [...resumed.slice(0, -1), { role: 'tool', content: [{ type: 'tool-approval-response', approvalId: 'a1', approved: false, reason: declined }, { type: 'tool-approval-response', approvalId: 'a2', approved: true }] }];
    const listed = { toolCallId: 'c3', toolName: 'get_pods', input: {}, output: 'pod-a' };

    it('answers the decided calls in the approvals message first, so no call is left without a result behind the new one', () => {
      const recorded = recordExecutions(decided, [listed], { started: new Set() });
      expect(recorded.slice(decided.length - 1)).toEqual([
        {
          role: 'tool',
          content: [
            ...(decided.at(-1)!.content as unknown[]),
            { type: 'tool-result', toolCallId: 'c1', toolName: 'deploy', output: { type: 'execution-denied', reason: declined } },
            { type: 'tool-result', toolCallId: 'c2', toolName: 'restart', output: { type: 'execution-denied', reason: NOT_STARTED_CALL } },
          ],
        },
        { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'c3', toolName: 'get_pods', input: {} }] },
        { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'c3', toolName: 'get_pods', output: { type: 'json', value: 'pod-a' } }] },
      ]);
    });

    it('does not call an approved call "not run" when its marker says it started, or the markers could not be read', () => {
      for (const options of [{ started: new Set(['c2']) }, {}]) {
        const results = recordExecutions(decided, [listed], options).flatMap((message) => (message.role === 'tool' ? message.content : []));
        expect(results.find((part) => part.type === 'tool-result' && part.toolCallId === 'c2')).toMatchObject({ output: { type: 'error-text', value: RESULT_LOST_CALL } });
      }
    });

    it('leaves the decisions to the AI SDK when no call came after them, so Try again still runs the approved call', () => {
      const recorded = recordExecutions(decided, [{ toolCallId: 'c2', toolName: 'restart', input: { service: 'web' }, output: 'ok' }], { started: new Set(['c2']) });
      expect(recorded.at(-1)!.content).toEqual([...(decided.at(-1)!.content as unknown[]), { type: 'tool-result', toolCallId: 'c2', toolName: 'restart', output: { type: 'json', value: 'ok' } }]);
    });
  });

  it('writes in a call of this turn whose id an earlier turn used, so the history stays valid for the provider', () => {
    const recorded = recordExecutions(answeredCallThenMessage, [{ toolCallId: 'call_1', toolName: 'restart', input: { namespace: 'prod' }, output: { restarted: true } }]);
    // Joined to the earlier turn's call_1, it would be a tool message right after the user's, answering no call: Chat Completions refuses that history.
    expect(recorded.slice(answeredCallThenMessage.length)).toEqual([
      { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'call_1', toolName: 'restart', input: { namespace: 'prod' } }] },
      { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'call_1', toolName: 'restart', output: { type: 'json', value: { restarted: true } } }] },
    ]);
  });
});

