import { retryAfterMsOf } from './retry-after.js';

/** Slack's answers to `chat.delete` that leave nothing to remove: already deleted, or not the bot's to delete. */
const NOTHING_TO_REMOVE = new Set(['message_not_found', 'cant_delete_message']);

/**
 * What a failed `chat.delete` means for a take-back: `gone` when Slack says there is nothing to
 * remove; otherwise it is tried again later, not before a rate limit's retry-after (`retryAfterMs`).
 */
export function deleteFailure(error: unknown): { gone: true } | { gone: false; retryAfterMs?: number } {
  const failure = (typeof error === 'object' && error !== null ? error : {}) as { data?: { error?: unknown } };
  if (typeof failure.data?.error === 'string' && NOTHING_TO_REMOVE.has(failure.data.error)) return { gone: true };
  const retryAfterMs = retryAfterMsOf(error);
  return retryAfterMs === undefined ? { gone: false } : { gone: false, retryAfterMs };
}
