import { randomUUID } from 'node:crypto';
import { describe, expect, inject, it } from 'vitest';
import { createRedisStore } from '../store/redis-store.js';
import { HEALTH_CHECK_TIMEOUT_MS, healthReply } from './health-check.js';

/**
 * health-check.ts answers `503 {"redis":"down","reason":"Redis did not answer within 2.5 s"}` when its
 * timer fires before the store's ping settles. The timer measures the bot's own event loop too: when
 * the bot's thread is busy (a turn's synchronous work, a big JSON parse) for longer than 2.5 s while
 * a healthy Redis has already answered, the timer's callback runs before the socket's reply is read,
 * and /healthz blames Redis ("down") for the bot's own stall: an operator is sent to look at a Redis
 * that answered in a millisecond.
 */
describe('/healthz while the bot thread is busy, on a healthy Redis', () => {
  it('does not report Redis as down because the event loop was blocked', async () => {
    // Every check asks Redis (no success kept from the one before): the stalled one must be a real probe.
    const store = createRedisStore({ url: inject('redisUrl'), keyPrefix: `test:health-stalled:${randomUUID()}:`, healthProbeReuseMs: 0 });
    try {
      // Connected and healthy.
      expect((await healthReply(store)).status).toBe(200);
      const pending = healthReply(store);
      // The bot's thread is busy for a moment longer than the limit; Redis answers the PING at once meanwhile.
      const until = Date.now() + HEALTH_CHECK_TIMEOUT_MS + 200;
      while (Date.now() < until) {
        // busy
      }
      const reply = await pending;
      const body = JSON.parse(reply.body) as { redis?: string; reason?: string };
      expect(body, reply.body).not.toMatchObject({ redis: 'down', reason: expect.stringMatching(/^Redis did not answer/) });
    } finally {
      await store.close();
    }
  });
});
