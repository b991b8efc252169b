import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { describe, expect, inject, it } from 'vitest';
import { startReplyLosingProxy } from '../../test/helpers/reply-losing-proxy.js';
import { createRedisKeys } from './redis-keys.js';
import { createRedisStore } from './redis-store.js';

/**
 * A receiver's hand-off (`handOffWork`, HAND_OFF_WORK_SCRIPT) whose reply is lost: ioredis sends the
 * script again on its new connection. ENQUEUE_AND_LOCK_SCRIPT and COMMIT_STEP_AND_QUEUE_SCRIPT carry an
 * attempt key for exactly this ("Sent again after a lost reply, it queues nothing twice"); the hand-off
 * has none, so the resend queues the item a second time.
 */
describe('a hand-off whose reply was lost', () => {
  it('is sent again by the client and queues the item once', async () => {
    const item = `message-${randomUUID()}`;
    const keyPrefix = `hand-off-reply-lost:${randomUUID()}:`;
    const proxy = await startReplyLosingProxy(inject('redisUrl'), item);
    const store = createRedisStore({ url: proxy.url, keyPrefix });
    const redis = new Redis(inject('redisUrl'));
    try {
      const threadKey = `T1:C1:${randomUUID()}`;
      await store.handOffWork(threadKey, item);
      expect(proxy.cut()).toBe(true);
      const at = createRedisKeys({ keyPrefix }).ofThread(threadKey);
      expect(await redis.lrange(at.queue(threadKey), 0, -1)).toEqual([item]);
    } finally {
      redis.disconnect();
      await store.close();
      await proxy.close();
    }
  });
});
