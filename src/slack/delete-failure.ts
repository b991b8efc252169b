/** Slack's answers to `chat.delete` that leave nothing to remove: already deleted, or not the bot's to delete. */
const NOTHING_TO_REMOVE = new Set(['message_not_found', 'cant_delete_message']);

/** The client's last error after rate-limited tries: `A rate limit was exceeded (url: …, retry-after: 7)`. */
const RETRY_AFTER = /retry-after: (\d+)/;

/**
 * What a failed `chat.delete` means for a take-back: `gone` when Slack says there is nothing to
 * remove; otherwise it is tried again later, not before a rate limit's retry-after (`retryAfterMs`).
 */
export function deleteFailure(error: unknown): { gone: true } | { gone: false; retryAfterMs?: number } {
  const failure = (typeof error === 'object' && error !== null ? error : {}) as { data?: { error?: unknown }; retryAfter?: unknown; message?: unknown; original?: { message?: unknown } };
  if (typeof failure.data?.error === 'string' && NOTHING_TO_REMOVE.has(failure.data.error)) return { gone: true };
  // A client that rejects rate-limited calls says so itself; ours waits, tries again, and names it in the last error.
  if (typeof failure.retryAfter === 'number') return { gone: false, retryAfterMs: failure.retryAfter * 1000 };
  for (const message of [failure.message, failure.original?.message]) {
    const seconds = typeof message === 'string' ? RETRY_AFTER.exec(message)?.[1] : undefined;
    if (seconds !== undefined) return { gone: false, retryAfterMs: Number(seconds) * 1000 };
  }
  return { gone: false };
}
