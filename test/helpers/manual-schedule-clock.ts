import type { ScheduleClock } from '../../src/conversation/scheduled-turns.js';

export interface ManualScheduleClock extends ScheduleClock {
  /**
   * Moves the clock to `time` and runs every timer due by then, in every bot that shares this
   * clock; resolves when their callbacks (the firings: claim, post, queue) have finished.
   */
  advanceTo(time: number): Promise<void>;
  /** Timers set and not yet run or cancelled. */
  pending(): number;
}

/** A clock the scheduler's timers run on only when the test says so: no test waits for real minutes. */
export function createManualScheduleClock(start: number): ManualScheduleClock {
  let current = start;
  const timers = new Set<{ at: number; callback: () => Promise<void> }>();
  return {
    now: () => current,
    setTimer(callback, delayMs) {
      const timer = { at: current + delayMs, callback };
      timers.add(timer);
      return { cancel: () => timers.delete(timer) };
    },
    async advanceTo(time) {
      current = time;
      const due = [...timers].filter((timer) => timer.at <= time);
      for (const timer of due) timers.delete(timer);
      await Promise.all(due.map((timer) => timer.callback()));
    },
    pending: () => timers.size,
  };
}
