import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createEventStreamKeeper, MAX_EVENT_STREAM_REOPEN_DELAY_MS } from './event-stream-keeper.js';

beforeEach(() => {
  vi.useFakeTimers();
  // No jitter: the waits are the base ones.
  vi.spyOn(Math, 'random').mockReturnValue(0.5);
});
afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});

function keeper() {
  const reopens: number[] = [];
  const kept = createEventStreamKeeper({ initialDelayMs: 1000, maxDelayMs: MAX_EVENT_STREAM_REOPEN_DELAY_MS, stableAfterMs: 60_000, now: () => Date.now(), reopen: () => reopens.push(Date.now()) });
  return { kept, reopens };
}

const ended = { reason: 'it ended its event stream', reopensItself: false };

describe('createEventStreamKeeper', () => {
  it('reconnects 1 s after a first loss, without a warning (a proxy ending long responses is routine)', () => {
    const { kept, reopens } = keeper();
    const start = Date.now();
    kept.opened();
    vi.advanceTimersByTime(120_000);
    kept.lost(ended);
    expect(kept.warning()).toBeUndefined();
    vi.advanceTimersByTime(999);
    expect(reopens).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(reopens).toEqual([start + 121_000]);
  });

  it('backs off from 1 s to 5 min for a server that never keeps the stream open, and warns from the second loss in a row', () => {
    const { kept, reopens } = keeper();
    let at = Date.now();
    const waits: number[] = [];
    for (let loss = 0; loss < 12; loss += 1) {
      kept.opened();
      kept.lost(ended);
      vi.advanceTimersByTime(MAX_EVENT_STREAM_REOPEN_DELAY_MS);
      waits.push(reopens.at(-1)! - at);
      at = Date.now();
    }
    expect(waits).toEqual([1, 2, 4, 8, 16, 32, 64, 128, 256, 300, 300, 300].map((seconds) => seconds * 1000));
    expect(kept.warning()).toBe('it ended its event stream');
  });

  it('backs off after failed reconnects and warns at once; a stream open again clears the warning and the reconnect waiting', () => {
    const { kept, reopens } = keeper();
    kept.lost(ended);
    vi.advanceTimersByTime(1000);
    kept.reopenFailed('connecting again to reopen its event stream failed (503)');
    expect(kept.warning()).toBe('connecting again to reopen its event stream failed (503)');
    expect(kept.isOpen()).toBe(false);
    vi.advanceTimersByTime(1999);
    expect(reopens).toHaveLength(1);
    vi.advanceTimersByTime(1);
    expect(reopens).toHaveLength(2);
    kept.reopenFailed('again');
    kept.opened();
    expect(kept.warning()).toBeUndefined();
    vi.advanceTimersByTime(MAX_EVENT_STREAM_REOPEN_DELAY_MS);
    expect(reopens).toHaveLength(2);
  });

  it('gives the client 5 s to reopen a broken stream itself, and reconnects only if it did not', () => {
    const { kept, reopens } = keeper();
    kept.opened();
    kept.lost({ reason: 'its event stream broke (other side closed)', reopensItself: true });
    // Its own reopen answered 503: a reconnect is waiting already.
    vi.advanceTimersByTime(1000);
    kept.lost({ reason: 'its event stream was answered HTTP 503', reopensItself: false });
    vi.advanceTimersByTime(3999);
    expect(reopens).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(reopens).toHaveLength(1);

    kept.opened();
    kept.lost({ reason: 'its event stream broke (other side closed)', reopensItself: true });
    vi.advanceTimersByTime(1000);
    kept.opened();
    vi.advanceTimersByTime(MAX_EVENT_STREAM_REOPEN_DELAY_MS);
    expect(reopens).toHaveLength(1);
  });

  it('stop() drops the reconnect waiting and the warning, and keeps the losses in a row', () => {
    const { kept, reopens } = keeper();
    kept.lost(ended);
    kept.stop();
    vi.advanceTimersByTime(MAX_EVENT_STREAM_REOPEN_DELAY_MS);
    expect(reopens).toEqual([]);
    kept.lost(ended);
    expect(kept.warning()).toBe('it ended its event stream');
    vi.advanceTimersByTime(1999);
    expect(reopens).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(reopens).toHaveLength(1);
  });
});
