/**
 * Admits holders in arrival order while there is room: fewer than `maxConcurrent` hold it and
 * `loaded()` says the resource it guards is not short. One holder is always admitted, so an idle
 * process makes progress whatever the load; a holder is counted the moment it is let in, so a wake
 * never admits too many. Turns (`conversation/load-gate.ts`: the event loop's delay, the heap) and
 * command processes (`tools/command/command-slots.ts`: available memory) are each bounded by one.
 */
export interface AdmissionGate {
  /**
   * Resolves when admitted, with the function to call once done (calling it again does nothing);
   * rejects with the signal's reason if the signal aborts first, and the place is given up.
   */
  acquire(signal?: AbortSignal): Promise<() => void>;
  /** Resolves when `acquire` would admit at once. */
  whenRoom(): Promise<void>;
  /** How many holders `acquire` would admit at once now (1 when idle, whatever the load). */
  room(): number;
  active(): number;
  /** Acquirers waiting to be admitted (not `whenRoom` callers). */
  waiting(): number;
  /** Admits what now fits: call when `loaded()` may have changed (gates re-check on every release anyway). */
  wake(): void;
}

export function createAdmissionGate(options: {
  maxConcurrent: number;
  loaded: () => boolean;
  /** Told of every admission and how long it waited (0 when admitted at once), for the metrics. */
  onAdmit?: (waitedMs: number) => void;
}): AdmissionGate {
  const { maxConcurrent, loaded, onAdmit } = options;
  let active = 0;
  const waiting: Array<{ admit: () => void; takes: boolean }> = [];
  const hasRoom = () => active === 0 || (active < maxConcurrent && !loaded());
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
      if (next?.takes) active += 1;
      next?.admit();
    }
  }
  return {
    active: () => active,
    waiting: () => waiting.filter((entry) => entry.takes).length,
    room() {
      if (waiting.length > 0) return 0;
      if (loaded()) return active === 0 ? 1 : 0;
      return Math.max(active === 0 ? 1 : 0, maxConcurrent - active);
    },
    whenRoom: () => (waiting.length === 0 && hasRoom() ? Promise.resolve() : new Promise<void>((resolve) => waiting.push({ admit: resolve, takes: false }))),
    acquire(signal) {
      if (signal?.aborted) return Promise.reject(signal.reason);
      if (waiting.length === 0 && hasRoom()) {
        active += 1;
        onAdmit?.(0);
        return Promise.resolve(release());
      }
      const askedAt = performance.now();
      return new Promise((resolve, reject) => {
        const entry = {
          admit: () => {
            signal?.removeEventListener('abort', giveUp);
            onAdmit?.(performance.now() - askedAt);
            resolve(release());
          },
          takes: true,
        };
        const giveUp = () => {
          const index = waiting.indexOf(entry);
          if (index !== -1) waiting.splice(index, 1);
          reject(signal?.reason);
        };
        signal?.addEventListener('abort', giveUp, { once: true });
        waiting.push(entry);
      });
    },
    wake,
  };
}
