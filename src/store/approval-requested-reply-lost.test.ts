import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { describe, expect, inject, it } from 'vitest';
import { startReplyLosingProxy } from '../../test/helpers/reply-losing-proxy.js';
import { makeStep } from '../approvals/pending-step.test-support.js';
import { createRedisKeys, newStepId } from './redis-keys.js';
import { createRedisStore } from './redis-store.js';
import { newThreadState, type ThreadState } from './thread-state.js';

/**
 * A turn opens a step with `createStep` (CREATE_STEP_SCRIPT), unnamed unless a post is to be taken
 * back (`takingBackIfFenced`), which is the common case. Its reply is lost: ioredis sends it again,
 * the script finds the thread's history newer than planned ('stale'), the store plans a rewrite and
 * sends that, and the whole step is written again, its `approval-requested` records with it.
 * The trail then shows the call requested twice for one card.
 */
describe('a step whose creation reply was lost', () => {
  it('records approval-requested once', async () => {
    const keyPrefix = `approval-requested-reply-lost:${randomUUID()}:`;
    const template = makeStep(['apv-1']);
    const threadKey = `${template.teamId}:${template.channel}:${randomUUID()}`;
    const stepId = newStepId(threadKey);
    const proxy = await startReplyLosingProxy(inject('redisUrl'), stepId);
    const store = createRedisStore({ url: proxy.url, keyPrefix });
    const redis = new Redis(inject('redisUrl'));
    try {
      const token = await store.tryLock(threadKey, 60_000);
      const fence = { threadKey, token: token! };
      const thread: ThreadState = { ...newThreadState(template, 1), threadKey, messages: [{ role: 'user', content: 'restart api' }] };
      // The turn saved the thread before (so its next write is planned as a patch).
      await store.saveThread(thread, 60_000, fence);
      const step = { ...template, threadKey, stepId };
      thread.pendingStepId = stepId;
      thread.messages = [...thread.messages, { role: 'assistant', content: 'I will restart it.' }];
      await store.createStep({
        step,
        thread,
        ttlMs: 60_000,
        fence,
        audit: [{ type: 'approval-requested', teamId: step.teamId, channel: step.channel, threadTs: step.threadTs, stepId, approvalId: 'apv-1', toolName: 'restart_service', input: { service: 'api' }, requesterId: step.requesterId }],
      });
      expect(proxy.cut()).toBe(true);
      const stream = createRedisKeys({ keyPrefix }).ofThread(threadKey).audit();
      const types = (await redis.xrange(stream, '-', '+')).map(([, fields]) => fields[1]);
      expect(types).toEqual(['approval-requested']);
    } finally {
      redis.disconnect();
      await store.close();
      await proxy.close();
    }
  });
});
