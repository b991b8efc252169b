import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { describe, expect, inject, it } from 'vitest';
import { createRedisStore } from '../store/redis-store.js';
import { createRedisKeys } from '../store/redis-keys.js';
import type { StateStore } from '../store/state-store.js';
import { createThreadWorker } from './thread-worker.js';
import type { WorkItem } from './work-item.js';

const logger = pino({ level: 'silent' });
const THREAD = 'T1:C1:1700000000.000100';
const item = (text: string): WorkItem => ({ kind: 'message', userId: 'U1', text, ts: `1700000000.${text}`, teamId: 'T1', channel: 'C1', threadTs: '1700000000.000100', readEarlierMessages: false });

describe('thread worker heartbeat while the last finish of a drain is on its way', () => {
  it('does not lock the thread again after the drain released it: the next message is handled at once', async () => {
    const keyPrefix = `test:${randomUUID()}:`;
    const inner = createRedisStore({ url: inject('redisUrl'), keyPrefix });
    const probe = new Redis(inject('redisUrl'));
    const lockKey = createRedisKeys({ keyPrefix }).ofThread(THREAD).lock(THREAD);
    const lockTtlMs = 300;
    let lagNext = false;
    const store: StateStore = {
      ...inner,
      finishWork(fence, finished, ttl, closing) {
        const reply = inner.finishWork(fence, finished, ttl, closing);
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
      const lockAfterDrain = (await probe.pttl(lockKey)) > 0 ? 'held' : 'none';
      // A held lock means another drain has the thread: this submit would only queue the message.
      await worker.submit(THREAD, item('second'));
      await worker.idle();
      expect({ lockAfterDrain, handled }).toEqual({ lockAfterDrain: 'none', handled: ['first', 'second'] });
    } finally {
      probe.disconnect();
      await inner.close();
    }
  });
});
