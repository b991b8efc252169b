import { randomUUID } from 'node:crypto';
import { describe, expect, inject, it } from 'vitest';
import { startReplyLosingProxy } from '../../test/helpers/reply-losing-proxy.js';
import { createRedisStore } from './redis-store.js';

describe('an enqueue that took the thread lock but whose reply was lost', () => {
  it('is sent again by the client and answered as the first run: the claim, the item queued once', async () => {
    const item = `message-${randomUUID()}`;
    const proxy = await startReplyLosingProxy(inject('redisUrl'), item);
    const store = createRedisStore({ url: proxy.url, keyPrefix: `enqueue-reply-lost:${randomUUID()}:` });
    try {
      const threadKey = `T1:C1:${randomUUID()}`;
      const claim = await store.enqueueWork(threadKey, item, 30_000);
      expect(proxy.cut()).toBe(true);
      // Without the resend recognised, the lock is the first run's and nobody would drain.
      expect(claim).toEqual({ token: expect.any(String), item });
      const fence = { threadKey, token: claim!.token };
      expect(await store.finishWork(fence, item, 30_000)).toBeUndefined();
      expect(await store.busyThreads({ limit: 1000 })).not.toContain(threadKey);
    } finally {
      await store.close();
      await proxy.close();
    }
  });
});
