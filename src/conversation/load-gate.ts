/**
 * How busy this process's event loop is: a timer that should fire every `intervalMs` measures how
 * late it fires. One monitor serves every gate of a process.
 */
export interface LoadMonitor {
  /** Recent event-loop delay in milliseconds (smoothed). */
  delayMs(): number;
  onSample(listener: () => void): () => void;
  close(): void;
}

export function createLoadMonitor({ intervalMs = 50 }: { intervalMs?: number } = {}): LoadMonitor {
  let smoothed = 0;
  let last = performance.now();
  const listeners = new Set<() => void>();
  const timer = setInterval(() => {
    const at = performance.now();
    const late = Math.max(0, at - last - intervalMs);
    last = at;
    // Quick to rise, slower to fall, so one calm tick does not reopen the gate under load.
    smoothed = late > smoothed ? late : smoothed * 0.7 + late * 0.3;
    for (const listener of listeners) listener();
  }, intervalMs);
  timer.unref();
  return {
    delayMs: () => smoothed,
    onSample(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    close: () => clearInterval(timer),
  };
}

/**
 * Admits work while the process has room for it: under `maxConcurrent` holders and while the event
 * loop keeps up (delay under `maxEventLoopDelayMs`). What limits a process is then its CPU and
 * memory, not a small constant; and work that waits, waits before it starts, not half-done. One
 * holder is always admitted, so an idle process makes progress on any machine.
 */
export interface LoadGate {
  acquire(): Promise<() => void>;
  /** Resolves when `acquire` would admit at once. */
  whenRoom(): Promise<void>;
  /** How many holders `acquire` would admit at once now (1 when idle, whatever the load). */
  room(): number;
  active(): number;
  /** Acquirers waiting to be admitted (not `whenRoom` callers). */
  waiting(): number;
}

export function createLoadGate(options: {
  monitor: LoadMonitor;
  maxConcurrent: number;
  maxEventLoopDelayMs: number;
  /** Told of every admission and how long it waited for room (0 when admitted at once), for the metrics. */
  onAdmit?: (waitedMs: number) => void;
}): LoadGate {
  const { monitor, maxConcurrent, maxEventLoopDelayMs, onAdmit } = options;
  let active = 0;
  let waitingAcquirers = 0;
  // In arrival order; an acquirer is counted the moment it is let in, so a wake never admits too many.
  const waiting: Array<{ admit: () => void; takes: boolean }> = [];
  const hasRoom = () => active === 0 || (active < maxConcurrent && monitor.delayMs() < maxEventLoopDelayMs);
  const release = () => {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      active -= 1;
      wake();
    };
  };
  function wake(): void {
    while (waiting.length > 0 && hasRoom()) {
      const next = waiting.shift();
      if (next?.takes) {
        active += 1;
        waitingAcquirers -= 1;
      }
      next?.admit();
    }
  }
  monitor.onSample(wake);
  return {
    active: () => active,
    waiting: () => waitingAcquirers,
    room() {
      if (waiting.length > 0) return 0;
      if (monitor.delayMs() >= maxEventLoopDelayMs) return active === 0 ? 1 : 0;
      return Math.max(active === 0 ? 1 : 0, maxConcurrent - active);
    },
    whenRoom: () => (waiting.length === 0 && hasRoom() ? Promise.resolve() : new Promise<void>((resolve) => waiting.push({ admit: resolve, takes: false }))),
    acquire() {
      if (waiting.length === 0 && hasRoom()) {
        active += 1;
        onAdmit?.(0);
        return Promise.resolve(release());
      }
      const askedAt = performance.now();
      waitingAcquirers += 1;
      return new Promise((resolve) =>
        waiting.push({
          admit: () => {
            onAdmit?.(performance.now() - askedAt);
            resolve(release());
          },
          takes: true,
        }),
      );
    },
  };
}
