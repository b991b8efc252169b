import type { ModelMessage } from 'ai';
import { describe, expect, it } from 'vitest';
import { answeredCallThenMessage, approvedCallsHistory } from './approved-history.test-support.js';
import { closeUnansweredCalls, INTERRUPTED_CALL, interruptedResults, recordUnrecordedCalls, startedWithoutResult } from './interrupted-calls.js';

const history = approvedCallsHistory({ request: 'restart both', calls: [{ toolName: 'restart', input: {} }, { toolName: 'restart', input: {} }] });

describe('interruptedResults', () => {
  it('closes only approved calls that had started, so the others still run and none runs twice', () => {
    const results = interruptedResults(history, new Set(['c1']));
    expect(results).toEqual([{ type: 'tool-result', toolCallId: 'c1', toolName: 'restart', output: { type: 'error-text', value: expect.stringContaining('Interrupted') } }]);
  });

  it('leaves a history that does not end with approvals alone', () => {
    expect(interruptedResults([...history, { role: 'assistant', content: 'done' }], new Set(['c1']))).toEqual([]);
  });
});

describe('closeUnansweredCalls', () => {
  const notRun = 'Not run: interrupted';

  it('tells a call that started it was interrupted, and only one that never started that it did not run', () => {
    const closed = closeUnansweredCalls(history, new Set(['c1']), notRun);
    // In the approvals' message, right after the calls: where the model APIs look for their results.
    expect(closed).toHaveLength(history.length);
    expect(closed.at(-1)).toEqual({
      role: 'tool',
      content: [
        ...(history.at(-1)!.content as unknown[]),
        { type: 'tool-result', toolCallId: 'c1', toolName: 'restart', output: { type: 'error-text', value: expect.stringContaining('may or may not have completed') } },
        { type: 'tool-result', toolCallId: 'c2', toolName: 'restart', output: { type: 'execution-denied', reason: notRun } },
      ],
    });
  });

  it("tells a denied call its denial, right after its call, even when a later call of the exchange follows it", () => {
    const declined = 'Declined by <@UBOB>. This is a human decision, not an error: do not retry this call unless the user asks again.';
    const resumed: ModelMessage[] = [
      { role: 'user', content: 'restart the worker' },
      {
        role: 'assistant',
        content: [
          { type: 'tool-call', toolCallId: 'call_1', toolName: 'restart_service', input: { service: 'worker' } },
          { type: 'tool-approval-request', approvalId: 'a1', toolCallId: 'call_1' },
        ],
      },
      { role: 'tool', content: [{ type: 'tool-approval-response', approvalId: 'a1', approved: false, reason: declined }] },
      // A failed turn that listed the pods after the denial: its call and result were written after the approvals.
      { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'call_2', toolName: 'get_pods', input: {} }] },
      { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'call_2', toolName: 'get_pods', output: { type: 'json', value: 'pod-a' } }] },
    ];
    const closed = closeUnansweredCalls(resumed, new Set(), notRun);
    expect(closed).toEqual([
      ...resumed.slice(0, 2),
      {
        role: 'tool',
        content: [
          { type: 'tool-approval-response', approvalId: 'a1', approved: false, reason: declined },
          { type: 'tool-result', toolCallId: 'call_1', toolName: 'restart_service', output: { type: 'execution-denied', reason: declined } },
        ],
      },
      ...resumed.slice(3),
    ]);
    // The stored history is not changed in place.
    expect(resumed[2]!.content).toHaveLength(1);
  });

  it('leaves a history whose calls all have results alone', () => {
    const answered: ModelMessage[] = [...history, { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'c1', toolName: 'restart', output: { type: 'text', value: 'ok' } }, { type: 'tool-result', toolCallId: 'c2', toolName: 'restart', output: { type: 'text', value: 'ok' } }] }];
    expect(closeUnansweredCalls(answered, new Set(['c1']), notRun)).toBe(answered);
    expect(startedWithoutResult(answered, ['c1', 'c2'])).toEqual([]);
    expect(startedWithoutResult(history, ['c1', 'c3'])).toEqual(['c1', 'c3']);
  });

  it('does not call a started call of the history "not run" when it writes in a call the history never saw', () => {
    const recorded = recordUnrecordedCalls(history, new Map([['c1', { toolName: 'restart', input: {} }], ['c9', { toolName: 'restart', input: { namespace: 'prod' } }]]));
    const results = recorded.flatMap((message) => (message.role === 'tool' ? message.content.filter((part) => part.type === 'tool-result') : []));
    expect(results.find((part) => part.toolCallId === 'c1')?.output).toEqual({ type: 'error-text', value: expect.stringContaining('may or may not have completed') });
    expect(results.find((part) => part.toolCallId === 'c2')?.output).toMatchObject({ type: 'execution-denied' });
    expect(recorded.at(-2)).toEqual({ role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'c9', toolName: 'restart', input: { namespace: 'prod' } }] });
  });

  it('does not write a call an earlier exchange answered into the latest one, whatever its marker says', () => {
    // The marker of exchange 1's get_pods, which a save that did not settle (a turn ending with a
    // card) left behind: its call is answered where it ran, so it is neither interrupted nor unanswered.
    const started = new Map<string, { toolName: string; input: unknown }>([['call_1', { toolName: 'get_pods', input: null }]]);
    const later: ModelMessage[] = [
      ...answeredCallThenMessage,
      { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'call_2', toolName: 'restart', input: { namespace: 'prod' } }] },
      { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'call_2', toolName: 'restart', output: { type: 'execution-denied', reason: 'superseded' } }] },
      { role: 'user', content: 'never mind, hello' },
    ];
    for (const history of [answeredCallThenMessage, later]) {
      expect(recordUnrecordedCalls(closeUnansweredCalls(history, started, notRun), started)).toBe(history);
      expect(startedWithoutResult(history, ['call_1'])).toEqual([]);
    }
    // A call the stopped turn made (a fresh id, the renaming sees to that) is still written in.
    const stopped = new Map([...started, ['call_3', { toolName: 'restart', input: { namespace: 'prod' } }]]);
    expect(recordUnrecordedCalls(later, stopped).slice(later.length)).toEqual([
      { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'call_3', toolName: 'restart', input: { namespace: 'prod' } }] },
      { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'call_3', toolName: 'restart', output: { type: 'error-text', value: INTERRUPTED_CALL } }] },
    ]);
    expect(startedWithoutResult(later, stopped.keys())).toEqual(['call_3']);
  });

  it('closes an unanswered call whose id an earlier exchange answered', () => {
    const reused: ModelMessage[] = [...answeredCallThenMessage, { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'call_1', toolName: 'restart', input: { namespace: 'prod' } }] }];
    expect(closeUnansweredCalls(reused, new Set(['call_1']), notRun).at(-1)).toEqual({
      role: 'tool',
      content: [{ type: 'tool-result', toolCallId: 'call_1', toolName: 'restart', output: { type: 'error-text', value: INTERRUPTED_CALL } }],
    });
  });
});
