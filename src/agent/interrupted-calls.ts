import type { ModelMessage, ToolResultPart } from 'ai';
import { answeredCallIdsOf, exchangesOf } from './current-exchange.js';

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

/** A call that started (its marker says so) in a turn whose history was never saved. */
export interface UnrecordedCall {
  toolCallId: string;
  toolName: string;
  input: unknown;
}

/**
 * Calls a stopped process started in a turn it never saved: the history does not know them, so
 * without this the turn would run again and the model would make (and run) them anew. They are
 * written into the history as calls the model made, each with the "interrupted" result, after
 * every earlier call is closed, so the model knows what may already have happened. A marker whose
 * call already has a result anywhere in the history is that call's (call ids are unique in a
 * thread, and a marker can outlive its exchange), so it is not written in again.
 */
export function recordUnrecordedCalls(messages: ModelMessage[], started: ReadonlyMap<string, { toolName: string; input: unknown }>): ModelMessage[] {
  const closed = closeUnansweredCalls(messages, started, 'Not run: the turn was interrupted before this call started.');
  const answered = answeredCallIdsOf(closed);
  const unrecorded = [...started].filter(([toolCallId]) => !answered.has(toolCallId)).map(([toolCallId, marker]): UnrecordedCall => ({ toolCallId, ...marker }));
  if (unrecorded.length === 0) return messages;
  return [
    ...closed,
    { role: 'assistant', content: unrecorded.map((call) => ({ type: 'tool-call' as const, toolCallId: call.toolCallId, toolName: call.toolName, input: call.input ?? {} })) },
    {
      role: 'tool',
      content: unrecorded.map((call) => ({ type: 'tool-result' as const, toolCallId: call.toolCallId, toolName: call.toolName, output: { type: 'error-text' as const, value: INTERRUPTED_CALL } })),
    },
  ];
}

/**
 * Gives every call of the history without a result one, before a new message continues it: a
 * call that had started (its marker says so) is told as interrupted, since it may have run; one a
 * human denied is told their denial, as the AI SDK would have; only a call that never started is
 * told `notRunReason`. Saying "not run" of a call that ran would have the model ask for it again.
 * A call is answered only by a result in its own exchange. Each result goes right after its call's
 * assistant message, where the model APIs require it (Chat Completions refuses a call whose results
 * do not follow it at once, and a result after another call's), not at the end of the history.
 */
export function closeUnansweredCalls(messages: ModelMessage[], started: ReadonlyMap<string, unknown> | ReadonlySet<string>, notRunReason: string): ModelMessage[] {
  const closed: ModelMessage[] = [];
  let changed = false;
  for (const exchange of exchangesOf(messages)) {
    const answered = answeredCallIdsOf(exchange);
    const denials = deniedCallReasons(exchange);
    for (let index = 0; index < exchange.length; index += 1) {
      const message = exchange[index]!;
      closed.push(message);
      if (message.role !== 'assistant' || typeof message.content === 'string') continue;
      const results: ToolResultPart[] = [];
      for (const part of message.content) {
        if (part.type !== 'tool-call' || part.providerExecuted || answered.has(part.toolCallId)) continue;
        const { toolCallId, toolName } = part;
        const denial = denials.get(toolCallId);
        if (started.has(toolCallId)) results.push({ type: 'tool-result', toolCallId, toolName, output: { type: 'error-text', value: INTERRUPTED_CALL } });
        else results.push({ type: 'tool-result', toolCallId, toolName, output: { type: 'execution-denied', reason: denial ?? notRunReason } });
      }
      if (results.length === 0) continue;
      changed = true;
      // Joined to the tool message that follows (the approvals), so the call's results stay one run after it.
      const next = exchange[index + 1];
      if (next?.role === 'tool') {
        closed.push({ ...next, content: [...next.content, ...results] });
        index += 1;
      } else closed.push({ role: 'tool', content: results });
    }
  }
  return changed ? closed : messages;
}

/**
 * The calls of an exchange a human denied, by tool call id, with the reason their approval response
 * gives (the decision, as `denialReason` words it): what the AI SDK would have told the model.
 */
export function deniedCallReasons(exchange: readonly ModelMessage[]): Map<string, string> {
  const denied = new Map<string, string>();
  for (const message of exchange) {
    if (message.role !== 'tool') continue;
    for (const part of message.content) if (part.type === 'tool-approval-response' && !part.approved) denied.set(part.approvalId, part.reason ?? DECLINED_CALL);
  }
  const reasons = new Map<string, string>();
  for (const message of exchange) {
    if (message.role !== 'assistant' || typeof message.content === 'string') continue;
    for (const part of message.content) {
      const reason = part.type === 'tool-approval-request' ? denied.get(part.approvalId) : undefined;
      if (part.type === 'tool-approval-request' && reason !== undefined) reasons.set(part.toolCallId, reason);
    }
  }
  return reasons;
}

/** For a denial that gives no reason (none of ours; an older or hand-made history's). */
const DECLINED_CALL = 'Declined: this call was not approved, so it did not run. Do not retry it unless the user asks again.';

/**
 * The started calls (by tool call id) whose result the history does not hold yet. A result in any
 * exchange counts: ids are unique in a thread, and the marker of a call answered in an earlier
 * exchange is only one no save has cleared yet.
 */
export function startedWithoutResult(messages: readonly ModelMessage[], started: Iterable<string>): string[] {
  const answered = answeredCallIdsOf(messages);
  return [...started].filter((toolCallId) => !answered.has(toolCallId));
}
