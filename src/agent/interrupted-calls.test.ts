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
    expect(closed.at(-1)).toEqual({
      role: 'tool',
      content: [
        { type: 'tool-result', toolCallId: 'c1', toolName: 'restart', output: { type: 'error-text', value: expect.stringContaining('may or may not have completed') } },
        { type: 'tool-result', toolCallId: 'c2', toolName: 'restart', output: { type: 'execution-denied', reason: notRun } },
      ],
    });
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

  it('writes in a started call of the stopped turn whose id an earlier turn used, so it is not run again', () => {
    const started = new Map([['call_1', { toolName: 'restart', input: { namespace: 'prod' } }]]);
    const closed = closeUnansweredCalls(answeredCallThenMessage, started, notRun);
    const recorded = recordUnrecordedCalls(closed, started);
    // Taken for the earlier turn's call_1, nothing is written: the turn runs again and the model asks for (and a grant runs) the restart twice.
    expect(recorded.slice(answeredCallThenMessage.length)).toEqual([
      { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'call_1', toolName: 'restart', input: { namespace: 'prod' } }] },
      { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'call_1', toolName: 'restart', output: { type: 'error-text', value: INTERRUPTED_CALL } }] },
    ]);
    // Its marker stays until that result is saved.
    expect(startedWithoutResult(answeredCallThenMessage, ['call_1'])).toEqual(['call_1']);
    expect(startedWithoutResult(recorded, ['call_1'])).toEqual([]);
  });

  it('closes an unanswered call whose id an earlier exchange answered', () => {
    const reused: ModelMessage[] = [...answeredCallThenMessage, { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'call_1', toolName: 'restart', input: { namespace: 'prod' } }] }];
    expect(closeUnansweredCalls(reused, new Set(['call_1']), notRun).at(-1)).toEqual({
      role: 'tool',
      content: [{ type: 'tool-result', toolCallId: 'call_1', toolName: 'restart', output: { type: 'error-text', value: INTERRUPTED_CALL } }],
    });
  });
});
