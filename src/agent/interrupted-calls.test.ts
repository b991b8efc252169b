import type { ModelMessage } from 'ai';
import { describe, expect, it } from 'vitest';
import { interruptedResults } from './interrupted-calls.js';

const history: ModelMessage[] = [
  { role: 'user', content: 'restart both' },
  {
    role: 'assistant',
    content: [
      { type: 'tool-call', toolCallId: 'c1', toolName: 'restart', input: {} },
      { type: 'tool-call', toolCallId: 'c2', toolName: 'restart', input: {} },
      { type: 'tool-approval-request', approvalId: 'a1', toolCallId: 'c1' },
      { type: 'tool-approval-request', approvalId: 'a2', toolCallId: 'c2' },
    ],
  },
  {
    role: 'tool',
    content: [
      { type: 'tool-approval-response', approvalId: 'a1', approved: true },
      { type: 'tool-approval-response', approvalId: 'a2', approved: true },
    ],
  },
];

describe('interruptedResults', () => {
  it('closes only approved calls that had started, so the others still run and none runs twice', () => {
    const results = interruptedResults(history, new Set(['c1']));
    expect(results).toEqual([{ type: 'tool-result', toolCallId: 'c1', toolName: 'restart', output: { type: 'error-text', value: expect.stringContaining('Interrupted') } }]);
  });

  it('leaves a history that does not end with approvals alone', () => {
    expect(interruptedResults([...history, { role: 'assistant', content: 'done' }], new Set(['c1']))).toEqual([]);
  });
});
