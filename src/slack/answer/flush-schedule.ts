export interface FlushSchedule {
  /** Asks for a flush: now if the interval has passed since the last one, else when it has. */
  request(): void;
  /** No more scheduled flushes; resolves once a running one has finished. */
  stop(): Promise<void>;
}

/**
 * Runs `flush` at most once per interval and never two at once, as Slack's per-message edit
 * limits want. After each flush, `hasMore` says whether text arrived meanwhile that still needs
 * one. `flush` must not reject: a failure is the caller's to log or handle.
 */
export function createFlushSchedule(options: { intervalMs: number; now?: () => number; flush: () => Promise<void>; hasMore: () => boolean }): FlushSchedule {
  const now = options.now ?? Date.now;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let lastFlushAt = Number.NEGATIVE_INFINITY;
  let stopped = false;

  const request = () => {
    if (stopped || timer !== undefined || running !== undefined) return;
    timer = setTimeout(run, Math.max(0, lastFlushAt + options.intervalMs - now()));
  };

  function run(): void {
    timer = undefined;
    running = options.flush().finally(() => {
      running = undefined;
      lastFlushAt = now();
      if (options.hasMore()) request();
    });
  }

  return {
    request,
    async stop() {
      stopped = true;
      clearTimeout(timer);
      timer = undefined;
      await running;
    },
  };
}
