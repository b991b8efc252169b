import type { ModelMessage, ToolResultPart } from 'ai';
import { currentExchange, toolCallIdsOf } from './current-exchange.js';
import { editNoteText, type EditNote } from './edit-note.js';
import { deniedCallReasons } from './interrupted-calls.js';
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

/** What the model reads for an approved call that never started in a turn that then failed. */
export const NOT_STARTED_CALL = 'Not run: the turn failed before this approved call started, so nothing was run. If it is still needed, say so and ask for it again.';

/** For an approved call that may have started (its marker says so, or could not be read) but left no result. */
export const RESULT_LOST_CALL =
  'Interrupted: the turn failed and this call left no result, so it may or may not have completed. It was not run again. Check its effect before retrying.';

/**
 * Writes what ran in a turn whose model call then failed into the history, so nothing runs twice.
 * Results of calls the history already holds (approved calls the turn resumed with) join its last
 * tool message, next to their approvals: there the AI SDK sees them answered and does not replay
 * them on Try again, while an approved call that never started is still replayed. Calls the failed
 * turn made itself were never saved: they are written as the model's calls, with their results.
 * Known means known in this exchange: an earlier turn's call with the same id is another call.
 *
 * Written after them, the new calls end the history, and the approvals are no longer in its last
 * message: the AI SDK would neither replay nor answer the calls decided there that have no result
 * yet, and every retry would fail on a call without a result. So those are answered first, in the
 * approvals' message: a denied call with its denial, an approved one that never started as not run.
 * `started`: the calls whose executing marker was written; without it, any of them may have started.
 */
export function recordExecutions(messages: readonly ModelMessage[], executions: readonly ExecutionRecord[], options: { started?: ReadonlySet<string> } = {}): ModelMessage[] {
  if (executions.length === 0) return [...messages];
  const known = toolCallIdsOf(currentExchange(messages));
  const ofKnownCalls = executions.filter((execution) => known.has(execution.toolCallId));
  const ofNewCalls = executions.filter((execution) => !known.has(execution.toolCallId));
  const recorded = [...messages];
  const last = recorded.at(-1);
  const answered = new Set(ofKnownCalls.map((execution) => execution.toolCallId));
  const results = [...ofKnownCalls.map(resultPart), ...(ofNewCalls.length > 0 ? decidedCallsWithoutResult(messages, { answered, started: options.started }) : [])];
  if (results.length > 0) {
    if (last?.role === 'tool') recorded[recorded.length - 1] = { ...last, content: [...last.content, ...results] };
    else recorded.push({ role: 'tool', content: results });
  }
  if (ofNewCalls.length > 0) {
    recorded.push(
      { role: 'assistant', content: ofNewCalls.map((execution) => ({ type: 'tool-call' as const, toolCallId: execution.toolCallId, toolName: execution.toolName, input: execution.input ?? {} })) },
      { role: 'tool', content: ofNewCalls.map(resultPart) },
    );
  }
  return recorded;
}

/**
 * Results for the calls whose decisions the history's last message holds (approval responses of a
 * resumed step) and that have none there, nor in `answered`: what the AI SDK told the model of them
 * in the failed turn, which was lost with it.
 */
function decidedCallsWithoutResult(messages: readonly ModelMessage[], { answered, started }: { answered: ReadonlySet<string>; started: ReadonlySet<string> | undefined }): ToolResultPart[] {
  const last = messages.at(-1);
  if (last?.role !== 'tool') return [];
  const decided = new Set(last.content.flatMap((part) => (part.type === 'tool-approval-response' ? [part.approvalId] : [])));
  const resulted = new Set(last.content.flatMap((part) => (part.type === 'tool-result' ? [part.toolCallId] : [])));
  const exchange = currentExchange(messages);
  const denials = deniedCallReasons(exchange);
  const results: ToolResultPart[] = [];
  for (const message of exchange) {
    if (message.role !== 'assistant' || typeof message.content === 'string') continue;
    for (const part of message.content) {
      if (part.type !== 'tool-approval-request' || !decided.has(part.approvalId)) continue;
      const { toolCallId } = part;
      if (answered.has(toolCallId) || resulted.has(toolCallId)) continue;
      const call = message.content.find((candidate) => candidate.type === 'tool-call' && candidate.toolCallId === toolCallId);
      const toolName = call?.type === 'tool-call' ? call.toolName : 'unknown';
      const denial = denials.get(toolCallId);
      if (denial !== undefined) results.push({ type: 'tool-result', toolCallId, toolName, output: { type: 'execution-denied', reason: denial } });
      else if (started === undefined || started.has(toolCallId)) results.push({ type: 'tool-result', toolCallId, toolName, output: { type: 'error-text', value: RESULT_LOST_CALL } });
      else results.push({ type: 'tool-result', toolCallId, toolName, output: { type: 'execution-denied', reason: NOT_STARTED_CALL } });
    }
  }
  return results;
}

function resultPart(execution: ExecutionRecord): ToolResultPart {
  const { toolCallId, toolName } = execution;
  if ('error' in execution) return { type: 'tool-result', toolCallId, toolName, output: { type: 'error-text', value: failedCallResult(execution.error, execution.edit) } };
  return { type: 'tool-result', toolCallId, toolName, output: { type: 'json', value: JSON.parse(JSON.stringify(execution.output ?? null)) } };
}
