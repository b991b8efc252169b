import type { ModelMessage } from 'ai';

/**
 * A thread's history as a resumed turn sees it: the user's request, the model's calls `c1`, `c2`, …
 * with approval requests `a1`, `a2`, …, and the human's approval of each, with no result yet.
 */
export function approvedCallsHistory({ request, calls }: { request: string; calls: ReadonlyArray<{ toolName: string; input: unknown }> }): ModelMessage[] {
  const ids = calls.map((_, index) => ({ toolCallId: `c${index + 1}`, approvalId: `a${index + 1}` }));
  return [
    { role: 'user', content: request },
    {
      role: 'assistant',
      content: [
        ...calls.map((call, index) => ({ type: 'tool-call' as const, toolCallId: ids[index]!.toolCallId, toolName: call.toolName, input: call.input })),
        ...ids.map(({ toolCallId, approvalId }) => ({ type: 'tool-approval-request' as const, approvalId, toolCallId })),
      ],
    },
    { role: 'tool', content: ids.map(({ approvalId }) => ({ type: 'tool-approval-response' as const, approvalId, approved: true })) },
  ];
}

/**
 * A thread whose first turn ran `call_1` and was answered, then a new message: the next turn of a
 * server that numbers calls per response uses `call_1` again, for another call.
 */
export const answeredCallThenMessage: ModelMessage[] = [
  { role: 'user', content: 'list pods' },
  { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'call_1', toolName: 'get_pods', input: { namespace: 'staging' } }] },
  { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'call_1', toolName: 'get_pods', output: { type: 'json', value: 'pod-a' } }] },
  { role: 'assistant', content: [{ type: 'text', text: 'pod-a' }] },
  { role: 'user', content: 'restart it in prod' },
];
