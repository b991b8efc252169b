import type { ModelMessage, ToolResultPart } from 'ai';
import { currentExchange, toolCallIdsOf } from './current-exchange.js';
import { editNoteText, type EditNote } from './edit-note.js';
import type { ExecutionRecord } from './tool-set.js';

/**
 * What the model reads for a call that started and threw: it may have had its effect. For a call a
 * human edited, what ran (and failed) was their version, not the model's call in the history.
 */
export function failedCallResult(error: string, edit?: EditNote): string {
  const firstLine = error.split('\n')[0] ?? '';
  const bounded = firstLine.length > 300 ? `${firstLine.slice(0, 300)}…` : firstLine;
  const result = `Failed after it started (${bounded}), so it may or may not have completed. It was not run again. Check its effect before retrying.`;
  return edit ? `${result} ${editNoteText(edit)}` : result;
}

/**
 * Writes what ran in a turn whose model call then failed into the history, so nothing runs twice.
 * Results of calls the history already holds (approved calls the turn resumed with) join its last
 * tool message, next to their approvals: there the AI SDK sees them answered and does not replay
 * them on Try again, while an approved call that never started is still replayed. Calls the failed
 * turn made itself were never saved: they are written as the model's calls, with their results.
 * Known means known in this exchange: an earlier turn's call with the same id is another call.
 */
export function recordExecutions(messages: readonly ModelMessage[], executions: readonly ExecutionRecord[]): ModelMessage[] {
  if (executions.length === 0) return [...messages];
  const known = toolCallIdsOf(currentExchange(messages));
  const ofKnownCalls = executions.filter((execution) => known.has(execution.toolCallId));
  const ofNewCalls = executions.filter((execution) => !known.has(execution.toolCallId));
  const recorded = [...messages];
  const last = recorded.at(-1);
  if (ofKnownCalls.length > 0) {
    if (last?.role === 'tool') recorded[recorded.length - 1] = { ...last, content: [...last.content, ...ofKnownCalls.map(resultPart)] };
    else recorded.push({ role: 'tool', content: ofKnownCalls.map(resultPart) });
  }
  if (ofNewCalls.length > 0) {
    recorded.push(
      { role: 'assistant', content: ofNewCalls.map((execution) => ({ type: 'tool-call' as const, toolCallId: execution.toolCallId, toolName: execution.toolName, input: execution.input ?? {} })) },
      { role: 'tool', content: ofNewCalls.map(resultPart) },
    );
  }
  return recorded;
}

function resultPart(execution: ExecutionRecord): ToolResultPart {
  const { toolCallId, toolName } = execution;
  if ('error' in execution) return { type: 'tool-result', toolCallId, toolName, output: { type: 'error-text', value: failedCallResult(execution.error, execution.edit) } };
  return { type: 'tool-result', toolCallId, toolName, output: { type: 'json', value: JSON.parse(JSON.stringify(execution.output ?? null)) } };
}
