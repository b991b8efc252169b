import type { EventStreamLoss } from './event-stream-watch.js';

/**
 * The longest wait between two reconnects for a lost event stream: a server (or a proxy) that never
 * keeps the stream open is reconnected every 5 minutes at most, not in a loop.
 */
export const MAX_EVENT_STREAM_REOPEN_DELAY_MS = 5 * 60_000;

/** How long `@ai-sdk/mcp`'s own two tries to open a broken stream again take (1 s, then 1.5 s), and some. */
const CLIENT_REOPEN_GRACE_MS = 5000;

export interface EventStreamKeeperOptions {
  /** First wait after a loss; doubled per loss or failed reconnect in a row, up to `maxDelayMs`. */
  initialDelayMs: number;
  maxDelayMs: number;
  /** A stream that stayed open this long resets the backoff when it is lost. */
  stableAfterMs: number;
  now: () => number;
  /** Connects the server again (a new session opens a new stream); told back with `opened` or `reopenFailed`. */
  reopen: () => void;
}

/**
 * Keeps an HTTP MCP server's event stream open, where its tools/list_changed come: a stream lost
 * for good (see `watchEventStream`) is reopened by connecting the server again after a wait that
 * grows with each loss in a row, and one the client reopens itself is given the time to. A first
 * loss is routine (a proxy ending long responses); from the second in a row, or a reconnect that
 * failed, `warning()` says the server's tool changes may go unheard until the stream is open again.
 */
export function createEventStreamKeeper(options: EventStreamKeeperOptions) {
  let openedAt: number | undefined;
  let losses = 0;
  let timer: NodeJS.Timeout | undefined;
  let warning: string | undefined;

  function schedule(minimumMs: number): void {
    const delay = Math.max(minimumMs, retryDelayMs({ initialDelayMs: options.initialDelayMs, maxDelayMs: options.maxDelayMs, failed: losses }));
    clearTimeout(timer);
    timer = setTimeout(() => {
      timer = undefined;
      options.reopen();
    }, delay);
    timer.unref();
  }

  return {
    /** The stream is open (a reconnect's, or the client reopened it): a reconnect waiting for it is off. */
    opened(): void {
      openedAt = options.now();
      warning = undefined;
      clearTimeout(timer);
      timer = undefined;
    },
    /** The stream was lost: reconnect after the wait, unless a reconnect is waiting already. */
    lost(loss: EventStreamLoss): void {
      if (timer) return;
      const lasted = openedAt === undefined ? 0 : options.now() - openedAt;
      openedAt = undefined;
      losses = lasted >= options.stableAfterMs ? 1 : losses + 1;
      if (losses >= 2) warning = loss.reason;
      schedule(loss.reopensItself ? CLIENT_REOPEN_GRACE_MS : 0);
    },
    /** The reconnect failed (the connection in use goes on): try again after a longer wait. */
    reopenFailed(reason: string): void {
      // The failed connection's stream may have opened before it failed: it is closed with it.
      openedAt = undefined;
      losses += 1;
      warning = reason;
      schedule(0);
    },
    /** Whether the stream is open now (a reconnect for it is not needed). */
    isOpen: (): boolean => openedAt !== undefined,
    /** Why the server's tool changes may go unheard now, while the stream is not open. */
    warning: (): string | undefined => warning,
    /** The connection is gone or closed: a reconnect of its own reopens the stream. The losses in a row are kept. */
    stop(): void {
      clearTimeout(timer);
      timer = undefined;
      openedAt = undefined;
      warning = undefined;
    },
  };
}

/** `initialDelayMs` doubled per consecutive failure up to `maxDelayMs`, give or take 20 %. */
export function retryDelayMs({ initialDelayMs, maxDelayMs, failed }: { initialDelayMs: number; maxDelayMs: number; failed: number }): number {
  const base = Math.min(maxDelayMs, initialDelayMs * 2 ** Math.max(0, failed - 1));
  return Math.round(base * (0.8 + Math.random() * 0.4));
}
