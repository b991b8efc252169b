import { getHeapStatistics } from 'node:v8';
import { createAdmissionGate, type AdmissionGate } from '../runtime/admission-gate.js';

/**
 * How busy this process's event loop is: a timer that should fire every `intervalMs` measures how
 * late it fires; and how full its JavaScript heap is, read at the same tick. One monitor serves every
 * gate of a process.
 */
export interface LoadMonitor {
  /** Recent event-loop delay in milliseconds (smoothed). */
  delayMs(): number;
  /** The heap in use as a fraction of the heap's limit, at the last sample (0 when not read). */
  heapFraction?(): number;
  onSample(listener: () => void): () => void;
  close(): void;
}

export function createLoadMonitor({ intervalMs = 50, heapStatistics = getHeapStatistics }: { intervalMs?: number; heapStatistics?: () => { used_heap_size: number; heap_size_limit: number } } = {}): LoadMonitor {
  let smoothed = 0;
  let heapFraction = 0;
  let last = performance.now();
  const listeners = new Set<() => void>();
  const readHeap = () => {
    const { used_heap_size: used, heap_size_limit: limit } = heapStatistics();
    heapFraction = limit > 0 ? used / limit : 0;
  };
  readHeap();
  const timer = setInterval(() => {
    const at = performance.now();
    const late = Math.max(0, at - last - intervalMs);
    last = at;
    // Quick to rise, slower to fall, so one calm tick does not reopen the gate under load.
    smoothed = late > smoothed ? late : smoothed * 0.7 + late * 0.3;
    readHeap();
    for (const listener of listeners) listener();
  }, intervalMs);
  timer.unref();
  return {
    delayMs: () => smoothed,
    heapFraction: () => heapFraction,
    onSample(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    close: () => clearInterval(timer),
  };
}

/**
 * Admits work while the process has room for it: under `maxConcurrent` holders, while the event
 * loop keeps up (delay under `maxEventLoopDelayMs`) and while the heap is under `maxHeapFraction` of
 * its limit (default 0.7: a burst of turns must not take the process to an out-of-memory crash, which
 * would cost every turn in it a restart). What limits a process is then its CPU and memory, not a
 * small constant; and work that waits, waits before it starts, not half-done. One holder is always
 * admitted, so an idle process makes progress on any machine.
 */
export type LoadGate = Omit<AdmissionGate, 'wake'>;

/** Above this fraction of the heap's limit in use, no new turn starts (but one, when none runs). */
export const DEFAULT_MAX_HEAP_FRACTION = 0.7;

export function createLoadGate(options: {
  monitor: LoadMonitor;
  maxConcurrent: number;
  maxEventLoopDelayMs: number;
  maxHeapFraction?: number;
  /** Told of every admission and how long it waited for room (0 when admitted at once), for the metrics. */
  onAdmit?: (waitedMs: number) => void;
}): LoadGate {
  const { monitor, maxConcurrent, maxEventLoopDelayMs, maxHeapFraction = DEFAULT_MAX_HEAP_FRACTION, onAdmit } = options;
  const gate = createAdmissionGate({
    maxConcurrent,
    loaded: () => monitor.delayMs() >= maxEventLoopDelayMs || (monitor.heapFraction?.() ?? 0) >= maxHeapFraction,
    ...(onAdmit ? { onAdmit } : {}),
  });
  // The loop's delay and the heap change between releases: every sample may let waiters in.
  monitor.onSample(gate.wake);
  return gate;
}
