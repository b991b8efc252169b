import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { createMemoryStore } from '../store/memory-store.js';
import { createThreadWorker } from './thread-worker.js';
import type { WorkItem } from './work-item.js';

const item = (threadTs: string): WorkItem => ({ kind: 'retry', userId: 'U1', teamId: 'T1', channel: 'C1', threadTs });

describe('thread worker', () => {
  it('handles items of one thread in order, one at a time, and different threads side by side up to the cap', async () => {
    let active = 0;
    let peak = 0;
    const handled: string[] = [];
    const worker = createThreadWorker({
      store: createMemoryStore(),
      logger: pino({ level: 'silent' }),
      maxConcurrentItems: 3,
      handle: async (work) => {
        active += 1;
        peak = Math.max(peak, active);
        await new Promise((resolve) => setTimeout(resolve, 10));
        if (work.kind === 'retry') handled.push(work.threadTs);
        active -= 1;
      },
    });
    await Promise.all([
      ...Array.from({ length: 10 }, (_, index) => worker.submit(`T1:C1:${index}`, item(String(index)))),
      worker.submit('T1:C1:0', item('0-second')),
    ]);
    await worker.idle();
    expect(handled).toHaveLength(11);
    expect(peak).toBe(3);
    expect(handled.indexOf('0')).toBeLessThan(handled.indexOf('0-second'));
  });
});
