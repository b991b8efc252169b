/**
 * How long a probe that found the store healthy answers the health checks after it (see `createSharedHealthProbe`):
 * a refusal that starts meanwhile shows this late at most (sooner if a store call fails: `forget`).
 */
export const HEALTH_PROBE_REUSE_MS = 1_000;

export interface SharedHealthProbe {
  /** The probe's outcome: the running probe's, or a success younger than `reuseForMs`, else a new probe's. */
  run(): Promise<void>;
  /** Drops a kept success (a store call just failed): the next `run` asks the store again. */
  forget(): void;
}

/**
 * `/healthz` is served to anyone (the Slack front's port is public), and its probe writes to Redis (a
 * SET, replicated and appended to the AOF): without sharing, a burst of anonymous requests becomes as
 * many Redis writes. Concurrent checks share one probe, and a success answers the checks of the next
 * `reuseForMs`; a failure is never kept, so the next check asks again (still one probe at a time).
 */
export function createSharedHealthProbe(probe: () => Promise<void>, options: { reuseForMs?: number; now?: () => number } = {}): SharedHealthProbe {
  const { reuseForMs = HEALTH_PROBE_REUSE_MS, now = () => performance.now() } = options;
  let running: Promise<void> | undefined;
  let succeededAt: number | undefined;
  // Bumped by `forget`: a probe that started before a store call failed does not vouch for the store after it.
  let forgotten = 0;
  return {
    run() {
      if (running) return running;
      if (succeededAt !== undefined && now() - succeededAt < reuseForMs) return Promise.resolve();
      // Judged from the probe's start: a success says the store took the write then.
      const startedAt = now();
      const generation = forgotten;
      const current = probe().then(() => {
        if (generation === forgotten) succeededAt = startedAt;
      });
      const settled = () => {
        running = undefined;
      };
      current.then(settled, settled);
      running = current;
      return current;
    },
    forget() {
      succeededAt = undefined;
      forgotten += 1;
    },
  };
}
