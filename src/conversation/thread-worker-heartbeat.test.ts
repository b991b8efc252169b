import { randomUUID } from 'node:crypto';
import { pino } from 'pino';
import { describe, expect, inject, it } from 'vitest';
import { createRedisStore } from '../store/redis-store.js';
import type { StateStore } from '../store/state-store.js';
import { createThreadWorker } from './thread-worker.js';
import type { WorkItem } from './work-item.js';

const logger = pino({ level: 'silent' });
const THREAD = 'T1:C1:1700000000.000100';
const item = (text: string): WorkItem => ({ kind: 'message', userId: 'U1', text, ts: `1700000000.${text}`, teamId: 'T1', channel: 'C1', threadTs: '1700000000.000100', readEarlierMessages: false });

describe('thread worker heartbeat while the last finish of a drain is on its way', () => {
  it('does not lock the thread again after the drain released it: the next message is handled at once', async () => {
    const inner = createRedisStore({ url: inject('redisUrl'), keyPrefix: `test:${randomUUID()}:` });
    const lockTtlMs = 300;
    let lagNext = false;
    const store: StateStore = {
      ...inner,
      finishWork(fence, finished, ttl, closing, named) {
        const reply = inner.finishWork(fence, finished, ttl, closing, named);
        if (lagNext) {
          // Other work on this event loop (another turn's JSON, a tool's output) holds it past a
          // heartbeat tick, so the tick fires before the finish's reply is read.
          const until = performance.now() + lockTtlMs / 3 + 50;
          while (performance.now() < until) {}
        }
        return reply;
      },
    };
    const handled: string[] = [];
    const worker = createThreadWorker({
      store,
      logger,
      lockTtlMs,
      handle: async (work) => {
        if (work.kind === 'message') handled.push(work.text);
        lagNext = true;
      },
    });
    try {
      await worker.submit(THREAD, item('first'));
      await worker.idle();
      lagNext = false;
      // Were the thread still locked, this submit would only queue the message for a drain that is over.
      await worker.submit(THREAD, item('second'));
      await worker.idle();
      expect(handled).toEqual(['first', 'second']);
    } finally {
      await inner.close();
    }
  });
});
