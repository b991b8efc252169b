import type { ModelMessage, ToolResultPart } from 'ai';

export const INTERRUPTED_CALL =
  'Interrupted: the bot process stopped while this call was running, so it may or may not have completed. It was not run again. Check its effect before retrying.';

/**
 * For a history that ends with approvals and is about to run again (crash recovery, Try again):
 * the approved calls that had started executing (`started`, by tool call id) but have no result.
 * Their "interrupted" results belong in the last message, where the AI SDK then skips executing
 * them; calls that never started are left to run.
 */
export function interruptedResults(messages: readonly ModelMessage[], started: ReadonlySet<string>): ToolResultPart[] {
  const last = messages.at(-1);
  if (last?.role !== 'tool') return [];
  const approved = new Set(last.content.flatMap((part) => (part.type === 'tool-approval-response' && part.approved ? [part.approvalId] : [])));
  const answered = new Set(last.content.flatMap((part) => (part.type === 'tool-result' ? [part.toolCallId] : [])));
  const results: ToolResultPart[] = [];
  for (const message of messages) {
    if (message.role !== 'assistant' || typeof message.content === 'string') continue;
    for (const part of message.content) {
      if (part.type !== 'tool-approval-request' || !approved.has(part.approvalId)) continue;
      if (!started.has(part.toolCallId) || answered.has(part.toolCallId)) continue;
      const call = message.content.find((candidate) => candidate.type === 'tool-call' && candidate.toolCallId === part.toolCallId);
      const toolName = call?.type === 'tool-call' ? call.toolName : 'unknown';
      results.push({ type: 'tool-result', toolCallId: part.toolCallId, toolName, output: { type: 'error-text', value: INTERRUPTED_CALL } });
    }
  }
  return results;
}
