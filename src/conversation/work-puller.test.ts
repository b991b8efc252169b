import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { createMemoryStore } from '../store/memory-store.js';
import { createLoadGate, type LoadMonitor } from './load-gate.js';
import type { ThreadWorker } from './thread-worker.js';
import { createWorkPuller } from './work-puller.js';

const calm: LoadMonitor = { delayMs: () => 0, onSample: () => () => {}, close() {} };

function recordingWorker(onPickUp: (threadKey: string) => void): ThreadWorker {
  return { pickUp: async (threadKey: string) => onPickUp(threadKey) } as unknown as ThreadWorker;
}

describe('work puller', () => {
  it('takes a burst of handed-off threads in one wait, as many as its gate has room for', async () => {
    const store = createMemoryStore();
    const threads = Array.from({ length: 5 }, (_unused, index) => `T1:C1:${index}`);
    for (const threadKey of threads) await store.handOffWork(threadKey, 'item');
    const waits: number[] = [];
    const counting = {
      nextReadyThreads: async (options: { timeoutMs: number; max: number }) => {
        const taken = await store.nextReadyThreads(options);
        waits.push(taken.length);
        return taken;
      },
      returnReadyThreads: (threadKeys: readonly string[]) => store.returnReadyThreads(threadKeys),
    };
    const pickedUp: string[] = [];
    let allPickedUp: () => void = () => {};
    const done = new Promise<void>((resolve) => (allPickedUp = resolve));
    const gate = createLoadGate({ monitor: calm, maxConcurrent: 4, maxEventLoopDelayMs: 100 });
    const worker = recordingWorker((threadKey) => {
      pickedUp.push(threadKey);
      if (pickedUp.length === threads.length) allPickedUp();
    });
    const puller = createWorkPuller({ store: counting, worker, gate, logger: pino({ level: 'silent' }) });
    puller.start();
    await done;
    await puller.stop();
    expect(pickedUp.sort()).toEqual(threads);
    // Four (the gate's room) in the first wait, the fifth in the next: not one wait per thread.
    expect(waits.slice(0, 2)).toEqual([4, 1]);
  });
});
