import type { ModelMessage } from 'ai';

/**
 * The messages after the last user message: the exchange a turn runs in. Tool call ids are only
 * unique within it (a server may number calls per response, and an old history may hold such
 * ids), so whether a call is already in the history, or already answered, is asked of it alone.
 */
export function currentExchange(messages: readonly ModelMessage[]): readonly ModelMessage[] {
  return messages.slice(messages.findLastIndex((message) => message.role === 'user') + 1);
}

/** Splits a history at its user messages, so each call can be paired with results of its own exchange. */
export function exchangesOf(messages: readonly ModelMessage[]): ModelMessage[][] {
  const exchanges: ModelMessage[][] = [[]];
  for (const message of messages) {
    if (message.role === 'user') exchanges.push([]);
    exchanges.at(-1)?.push(message);
  }
  return exchanges;
}

export function toolCallIdsOf(messages: readonly ModelMessage[]): Set<string> {
  return new Set(
    messages.flatMap((message) =>
      message.role === 'assistant' && typeof message.content !== 'string' ? message.content.flatMap((part) => (part.type === 'tool-call' ? [part.toolCallId] : [])) : [],
    ),
  );
}

export function answeredCallIdsOf(messages: readonly ModelMessage[]): Set<string> {
  return new Set(messages.flatMap((message) => (message.role === 'tool' ? message.content.flatMap((part) => (part.type === 'tool-result' ? [part.toolCallId] : [])) : [])));
}
