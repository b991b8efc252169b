import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ModelTimeoutError, startModelWatchdog } from './model-watchdog.js';

beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

describe('startModelWatchdog', () => {
  it('aborts after the model has been silent for the timeout, and not while it keeps sending', () => {
    const watchdog = startModelWatchdog({ timeoutMs: 1000 });
    vi.advanceTimersByTime(900);
    watchdog.touch();
    vi.advanceTimersByTime(900);
    expect(watchdog.signal.aborted).toBe(false);
    vi.advanceTimersByTime(100);
    expect(watchdog.signal.aborted).toBe(true);
    expect(watchdog.signal.reason).toBeInstanceOf(ModelTimeoutError);
    expect(String(watchdog.signal.reason.message)).toBe('the model sent nothing for 1 s');
  });

  it('does not count the time a tool runs against the model', () => {
    const watchdog = startModelWatchdog({ timeoutMs: 1000 });
    watchdog.toolStarted();
    vi.advanceTimersByTime(60_000);
    expect(watchdog.signal.aborted).toBe(false);
    watchdog.toolFinished();
    vi.advanceTimersByTime(1000);
    expect(watchdog.signal.aborted).toBe(true);
  });

  it('never fires once stopped', () => {
    const watchdog = startModelWatchdog({ timeoutMs: 1000 });
    watchdog.stop();
    vi.advanceTimersByTime(5000);
    expect(watchdog.signal.aborted).toBe(false);
  });
});
