import { modelMessageSchema, type ModelMessage } from 'ai';
import { createValidatedMessages, type ValidatedMessages } from './validated-messages.js';

export interface HistoryLimits {
  maxMessages: number;
  maxBytes: number;
}

/**
 * Stored history is untrusted: it may come from an older version or a tampered store. Anything that
 * does not validate is dropped whole rather than half-kept, since a partial history can pair tool
 * calls with the wrong results.
 */
export function parseHistory(messages: unknown, validated: ValidatedMessages = processValidatedMessages): { messages: ModelMessage[]; valid: boolean } {
  if (!Array.isArray(messages)) return { messages: [], valid: false };
  const valid = messages.every((message) => {
    const json = JSON.stringify(message);
    if (json !== undefined && validated.has(json)) return true;
    if (!modelMessageSchema.safeParse(message).success) return false;
    if (json !== undefined) validated.add(json);
    return true;
  });
  return valid ? { messages: messages as ModelMessage[], valid } : { messages: [], valid };
}

/**
 * 4 M characters (4 MB for ASCII): sixteen histories at the default 256 KB cap, or the last turns of
 * thousands of short threads; small beside the process's RSS, so pending approvals by the
 * thousand do not grow it past what the RSS target allows.
 */
const processValidatedMessages = createValidatedMessages({ maxCharacters: 4 * 1024 * 1024 });

/**
 * Drops the oldest exchanges until the history fits. Cuts only before a user message so a tool call
 * is never separated from its result; the latest exchange is always kept.
 */
export function trimHistory(messages: ModelMessage[], limits: HistoryLimits): ModelMessage[] {
  let bytes = Buffer.byteLength(JSON.stringify(messages));
  let start = 0;
  while (messages.length - start > limits.maxMessages || bytes > limits.maxBytes) {
    let nextUser = start + 1;
    while (nextUser < messages.length && messages[nextUser]?.role !== 'user') nextUser += 1;
    if (nextUser >= messages.length) break;
    // A history's JSON is its messages' joined by commas: a cut subtracts what it drops, so each
    // message is serialized at most once more, and only if it is dropped.
    for (let index = start; index < nextUser; index += 1) bytes -= Buffer.byteLength(JSON.stringify(messages[index])) + 1;
    start = nextUser;
  }
  return start === 0 ? messages : messages.slice(start);
}
