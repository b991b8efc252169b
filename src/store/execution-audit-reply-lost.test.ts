import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { describe, expect, inject, it } from 'vitest';
import { startReplyLosingProxy } from '../../test/helpers/reply-losing-proxy.js';
import { createRedisKeys } from './redis-keys.js';
import { createRedisStore } from './redis-store.js';

/**
 * A call's `tool-started` (with its `auto-approved` / `grant-used`) and `tool-executed` records are
 * written by MARK_EXECUTING_SCRIPT and FINISH_EXECUTING_SCRIPT. When the reply is lost, ioredis sends
 * the script again on its new connection; neither script carries an attempt key, so the trail then
 * says the call started (or finished) twice although it ran once.
 */
describe('execution records whose reply was lost', () => {
  async function setUp(marker: string) {
    const keyPrefix = `execution-audit-reply-lost:${randomUUID()}:`;
    const proxy = await startReplyLosingProxy(inject('redisUrl'), marker);
    const store = createRedisStore({ url: proxy.url, keyPrefix });
    const redis = new Redis(inject('redisUrl'));
    const threadKey = `T1:C1:${randomUUID()}`;
    const claim = await store.enqueueWork(threadKey, `item-${randomUUID()}`, 30_000);
    const fence = { threadKey, token: claim!.token };
    const stream = createRedisKeys({ keyPrefix }).ofThread(threadKey).audit();
    const types = async () => (await redis.xrange(stream, '-', '+')).map(([, fields]) => fields[1]);
    return { proxy, store, redis, fence, threadKey, types };
  }
  const where = { teamId: 'T1', channel: 'C1', threadTs: '1.0' };

  it('tool-started (and auto-approved) is recorded once for a call that starts once', async () => {
    const toolCallId = `call-${randomUUID()}`;
    const { proxy, store, redis, fence, types } = await setUp(toolCallId);
    try {
      const marked = await store.markExecuting({
        fence,
        toolCallId,
        marker: { toolName: 'restart_service', input: { service: 'api' }, startedAt: Date.now() },
        ttlMs: 60_000,
        audit: [
          { type: 'tool-started', ...where, toolName: 'restart_service', toolCallId, input: { service: 'api' }, inputHash: 'h', basis: { kind: 'auto-approve', mode: 'channel' } },
          { type: 'auto-approved', ...where, toolName: 'restart_service', input: { service: 'api' }, mode: 'channel', requesterId: 'U1' },
        ],
      });
      expect(proxy.cut()).toBe(true);
      expect(marked).toBe('marked');
      expect(await types()).toEqual(['tool-started', 'auto-approved']);
    } finally {
      redis.disconnect();
      await store.close();
      await proxy.close();
    }
  });

  it('tool-executed is recorded once for a call that finished once', async () => {
    const toolCallId = `call-${randomUUID()}`;
    const { proxy, store, redis, fence, threadKey, types } = await setUp(`finished-${toolCallId}`);
    try {
      await store.markExecuting({
        fence,
        toolCallId,
        marker: { toolName: 'restart_service', input: { service: 'api' }, startedAt: Date.now() },
        ttlMs: 60_000,
        audit: [{ type: 'tool-started', ...where, toolName: 'restart_service', toolCallId, input: { service: 'api' }, inputHash: 'h', basis: { kind: 'no-approval-needed' } }],
      });
      await store.finishExecuting({
        threadKey,
        toolCallId,
        marker: { toolName: 'restart_service', input: null, startedAt: Date.now() - 5, finishedAt: Date.now() },
        audit: { type: 'tool-executed', ...where, toolName: 'restart_service', toolCallId, status: 'error', durationMs: 5, error: `exit 1: finished-${toolCallId}` },
      });
      expect(proxy.cut()).toBe(true);
      expect(await types()).toEqual(['tool-started', 'tool-executed']);
    } finally {
      redis.disconnect();
      await store.close();
      await proxy.close();
    }
  });
});
