import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { describe, expect, inject, it } from 'vitest';
import { startReplyLosingProxy } from '../../test/helpers/reply-losing-proxy.js';
import { createRedisKeys } from './redis-keys.js';
import { createRedisStore } from './redis-store.js';
import { newThreadState, type ThreadState } from './thread-state.js';

/**
 * A save that carries audit records (a call closed as interrupted, an approval withdrawn) is sent
 * again by ioredis when its reply was lost. Unnamed, the resend found the history newer than its
 * patch was planned from ('stale'), went again as a rewrite, and appended its records twice.
 */
describe('a save with audit records whose reply was lost', () => {
  it('records them once', async () => {
    const keyPrefix = `audited-save-reply-lost:${randomUUID()}:`;
    const toolCallId = `call-${randomUUID()}`;
    const proxy = await startReplyLosingProxy(inject('redisUrl'), toolCallId);
    const store = createRedisStore({ url: proxy.url, keyPrefix });
    const redis = new Redis(inject('redisUrl'));
    const where = { teamId: 'T1', channel: 'C1', threadTs: `${Date.now()}.000100` };
    const threadKey = `${where.teamId}:${where.channel}:${where.threadTs}`;
    try {
      const fence = { threadKey, token: (await store.tryLock(threadKey, 60_000))! };
      const thread: ThreadState = { ...newThreadState(where, 1), threadKey, messages: [{ role: 'user', content: 'restart api' }] };
      // Saved before, so the next save is planned as a patch.
      await store.saveThread(thread, 60_000, fence);
      thread.messages = [...thread.messages, { role: 'assistant', content: 'Restarting.' }];
      await store.saveThread(thread, 60_000, fence, {
        settled: true,
        audit: [{ type: 'tool-executed', ...where, toolName: 'restart_service', toolCallId, status: 'interrupted', error: 'stopped while it ran' }],
      });
      expect(proxy.cut()).toBe(true);
      const stream = createRedisKeys({ keyPrefix }).ofThread(threadKey).audit();
      expect((await redis.xrange(stream, '-', '+')).map(([, fields]) => fields[1])).toEqual(['tool-executed']);
      expect((await store.getThread(threadKey))?.messages).toHaveLength(2);
    } finally {
      redis.disconnect();
      await store.close();
      await proxy.close();
    }
  });
});
