import type { ModelMessage } from 'ai';

/**
 * The messages after the last user message: the exchange a turn runs in. Whether a call the turn
 * itself made is already in the history is asked of it alone, so a result is written where its
 * call is (an old history may repeat an id across exchanges). Whether a started call was answered
 * at all is asked of the whole history: new ids are unique in a thread, and an executing marker
 * can outlive the exchange of its call.
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
