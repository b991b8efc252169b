import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { describe, expect, inject, it } from 'vitest';
import { createRedisKeys } from './redis-keys.js';
import { createRedisStore } from './redis-store.js';
import { newThreadState } from './thread-state.js';

/**
 * A thread's fields besides its messages (here the saved answer, `outbox`) go to SAVE_THREAD_SCRIPT
 * as JSON that the script decodes with cjson. The model's answer is text from JSON the bot parsed:
 * it may hold a lone UTF-16 surrogate (`"\ud800"`), which JSON.stringify writes back as that escape
 * and cjson refuses, so the save fails with a Lua error every time.
 */
describe('a thread save whose answer holds a lone surrogate', () => {
  it('is saved', async () => {
    const store = createRedisStore({ url: inject('redisUrl'), keyPrefix: `thread-meta-surrogate:${randomUUID()}:` });
    try {
      const address = { teamId: 'T0TEAM', channel: 'C0OPS', threadTs: '1700000000.000100' };
      const thread = newThreadState(address, Date.now());
      const token = (await store.tryLock(thread.threadKey, 60_000))!;
      const fence = { threadKey: thread.threadKey, token };
      const saved = await store.saveThread({ ...thread, outbox: 'Deployed \ud83d' }, 60_000, fence).then(() => 'saved', (error: unknown) => String(error));
      expect(saved).toBe('saved');
      expect((await store.getThread(thread.threadKey))?.outbox, 'read back as it was written').toBe('Deployed \ud83d');
    } finally {
      await store.close();
    }
  });

  it('is saved when the script cannot read its fields at all, and keeps the thread as long as one with a waiting request', async () => {
    const keyPrefix = `thread-meta-unreadable:${randomUUID()}:`;
    const store = createRedisStore({ url: inject('redisUrl'), keyPrefix });
    const redis = new Redis(inject('redisUrl'));
    try {
      const address = { teamId: 'T0TEAM', channel: 'C0OPS', threadTs: '1700000000.000100' };
      const thread = newThreadState(address, Date.now());
      const token = (await store.tryLock(thread.threadKey, 60_000))!;
      const fence = { threadKey: thread.threadKey, token };
      await store.saveThread(thread, 600_000, fence);
      // Nested deeper than cjson reads: whether a request waits cannot be told, so the longer life stands.
      let deep: unknown = 'leaf';
      for (let depth = 0; depth < 1_100; depth += 1) deep = { inner: deep };
      await store.saveThread({ ...thread, unpostedStopNotice: 'Stopped', notedProblems: [JSON.stringify(deep)], deep } as never, 60_000, fence);
      expect((await store.getThread(thread.threadKey))?.unpostedStopNotice).toBe('Stopped');
      expect(await redis.pttl(createRedisKeys({ keyPrefix }).ofThread(thread.threadKey).thread(thread.threadKey))).toBeGreaterThan(60_000);
    } finally {
      redis.disconnect();
      await store.close();
    }
  });
});
