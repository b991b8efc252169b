/**
 * Redis answered a write with an error reply: it takes none right now, though PING and ROLE are
 * answered. A full Redis with `maxmemory-policy noeviction` (OOM), a primary with
 * `min-replicas-to-write` and too few replicas (NOREPLICAS), one whose last snapshot failed with
 * `stop-writes-on-bgsave-error` (MISCONF). `refusal` is only the reply's first word (its code), for
 * `/healthz` to name on a public port; the message is the reply's own, so the error is judged
 * (`isStoreUnavailable`) as the bot's own writes' would be.
 */
export class WritesRefusedError extends Error {
  override readonly name = 'WritesRefusedError';
  readonly refusal: string;

  constructor(reply: Error) {
    super(reply.message, { cause: reply });
    this.refusal = /^[A-Z][A-Z0-9_]{0,31}\b/.exec(reply.message)?.[0] ?? 'ERR';
  }
}
