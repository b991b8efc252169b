import type { ModelMessage } from 'ai';
import { describe, expect, it } from 'vitest';
import { answeredCallThenMessage, approvedCallsHistory } from './approved-history.test-support.js';
import { recordExecutions } from './executed-calls.js';

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

  it('writes in a call of this turn whose id an earlier turn used, so the history stays valid for the provider', () => {
    const recorded = recordExecutions(answeredCallThenMessage, [{ toolCallId: 'call_1', toolName: 'restart', input: { namespace: 'prod' }, output: { restarted: true } }]);
    // Joined to the earlier turn's call_1, it would be a tool message right after the user's, answering no call: Chat Completions refuses that history.
    expect(recorded.slice(answeredCallThenMessage.length)).toEqual([
      { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'call_1', toolName: 'restart', input: { namespace: 'prod' } }] },
      { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'call_1', toolName: 'restart', output: { type: 'json', value: { restarted: true } } }] },
    ]);
  });
});

