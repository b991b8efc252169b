import { describe, expect, it } from 'vitest';
import { createLoadGate, createLoadMonitor, type LoadMonitor } from './load-gate.js';

function fakeMonitor() {
  let delay = 0;
  let heap = 0;
  const listeners = new Set<() => void>();
  const monitor: LoadMonitor = {
    delayMs: () => delay,
    heapFraction: () => heap,
    onSample(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    close() {},
  };
  return {
    monitor,
    setDelay(ms: number) {
      delay = ms;
      for (const listener of listeners) listener();
    },
    setHeapFraction(fraction: number) {
      heap = fraction;
      for (const listener of listeners) listener();
    },
  };
}

describe('load gate', () => {
  it('admits up to its cap, then one waiter per release, in arrival order', async () => {
    const { monitor } = fakeMonitor();
    const gate = createLoadGate({ monitor, maxConcurrent: 2, maxEventLoopDelayMs: 100 });
    const first = await gate.acquire();
    await gate.acquire();
    const order: string[] = [];
    const third = gate.acquire().then((release) => (order.push('third'), release));
    const fourth = gate.acquire().then((release) => (order.push('fourth'), release));
    await Promise.resolve();
    expect(gate.active()).toBe(2);
    first();
    first();
    await third;
    expect(order).toEqual(['third']);
    expect(gate.active()).toBe(2);
    (await third)();
    await fourth;
    expect(order).toEqual(['third', 'fourth']);
  });

  it('stops admitting while the event loop lags, but never stops an idle process', async () => {
    const { monitor, setDelay } = fakeMonitor();
    const gate = createLoadGate({ monitor, maxConcurrent: 100, maxEventLoopDelayMs: 100 });
    setDelay(500);
    const only = await gate.acquire();
    expect(gate.active()).toBe(1);
    let admitted = false;
    const second = gate.acquire().then((release) => ((admitted = true), release));
    let roomSeen = false;
    const room = gate.whenRoom().then(() => (roomSeen = true));
    await new Promise((resolve) => setImmediate(resolve));
    expect(admitted).toBe(false);
    expect(roomSeen).toBe(false);
    setDelay(10);
    await second;
    await room;
    expect(gate.active()).toBe(2);
    only();
  });

  it('says how many it would admit at once: what is left under the cap, none while the loop lags or others wait, one when idle', async () => {
    const { monitor, setDelay } = fakeMonitor();
    const gate = createLoadGate({ monitor, maxConcurrent: 3, maxEventLoopDelayMs: 100 });
    expect(gate.room()).toBe(3);
    const first = await gate.acquire();
    expect(gate.room()).toBe(2);
    setDelay(500);
    expect(gate.room()).toBe(0);
    first();
    expect(gate.room()).toBe(1);
    setDelay(10);
    expect(gate.room()).toBe(3);
    const held = [await gate.acquire(), await gate.acquire(), await gate.acquire()];
    expect(gate.room()).toBe(0);
    const waiting = gate.acquire();
    held[0]?.();
    expect(gate.room()).toBe(0);
    (await waiting)();
    expect(gate.room()).toBe(1);
  });

  it('counts the acquirers it holds back, and tells each admission how long it waited', async () => {
    const { monitor, setDelay } = fakeMonitor();
    const waits: number[] = [];
    const gate = createLoadGate({ monitor, maxConcurrent: 1, maxEventLoopDelayMs: 100, onAdmit: (waitedMs) => waits.push(waitedMs) });
    const first = await gate.acquire();
    expect(waits).toEqual([0]);
    const second = gate.acquire();
    // A caller waiting for room is not a turn held back.
    const room = gate.whenRoom();
    expect(gate.waiting()).toBe(1);
    const blockedUntil = performance.now() + 5;
    while (performance.now() < blockedUntil) {
      // The second acquirer waits at least this long.
    }
    first();
    (await second)();
    await room;
    expect(gate.waiting()).toBe(0);
    expect(waits).toHaveLength(2);
    expect(waits[1]).toBeGreaterThanOrEqual(5);
    setDelay(500);
    // An idle process admits one at once, however late its loop.
    (await gate.acquire())();
    expect(waits[2]).toBe(0);
  });

  it('stops admitting while the heap is nearly full, so a burst of turns cannot run the process out of memory', async () => {
    const { monitor, setHeapFraction } = fakeMonitor();
    const gate = createLoadGate({ monitor, maxConcurrent: 100, maxEventLoopDelayMs: 100, maxHeapFraction: 0.7 });
    const first = await gate.acquire();
    setHeapFraction(0.75);
    expect(gate.room()).toBe(0);
    const second = gate.acquire();
    expect(gate.waiting()).toBe(1);
    // A collection freed the heap: the next sample lets the turn in.
    setHeapFraction(0.3);
    (await second)();
    first();
    setHeapFraction(0.9);
    // An idle process still admits one.
    expect(gate.room()).toBe(1);
    (await gate.acquire())();
  });

  it('reads the heap at each sample, as a fraction of its limit', () => {
    let used = 100;
    const monitor = createLoadMonitor({ intervalMs: 60_000, heapStatistics: () => ({ used_heap_size: used, heap_size_limit: 1_000 }) });
    try {
      expect(monitor.heapFraction?.()).toBe(0.1);
      used = 900;
      // Read at the monitor's tick, not at every admission.
      expect(monitor.heapFraction?.()).toBe(0.1);
    } finally {
      monitor.close();
    }
  });
});
