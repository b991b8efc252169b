import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedisServer, type RedisServerHandle } from '../helpers/redis-server.js';
import { createRedisStore } from '../../src/store/redis-store.js';
import { click, createTestDecider, storeStepInNewThread } from '../../src/approvals/decide-call.test-support.js';

/**
 * Redis at maxmemory with `noeviction` (what the bot's own redis-evicts-keys warning asks for) refuses
 * the decision's script at once with OOM, before it writes anything. Redis answered, and nothing was
 * recorded: the approver must hear "nothing changed, try again", not "I could not confirm whether your
 * approval was recorded (Redis did not answer in time) ... do not approve again elsewhere until then".
 */
describe('a decision write Redis refuses at once with OOM', () => {
  let server: RedisServerHandle;
  beforeAll(async () => {
    server = await startRedisServer();
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('is told nothing changed (Redis answered; nothing was written), not "could not confirm"', async () => {
    const keyPrefix = `oom:${randomUUID()}:`;
    const store = createRedisStore({ url: server.url, keyPrefix });
    const admin = new Redis(server.url);
    try {
      const step = await storeStepInNewThread(store, 'scale');

      // Redis full: every write is refused (reads still answered).
      await admin.config('SET', 'maxmemory-policy', 'noeviction');
      await admin.config('SET', 'maxmemory', '1');

      const { decider } = createTestDecider({ store });
      const outcome = await decider.record(click(step, 'U0ALICE', { kind: 'approve', version: 0 }), { storeWaitMs: 2_000 });
      await admin.config('SET', 'maxmemory', '0');
      // Nothing was recorded.
      expect((await store.getStep(step.stepId))?.decisions).toEqual({});
      expect(outcome.recorded).toBe(false);
      const message = outcome.recorded ? '' : outcome.message;
      expect(message, 'told to hold off although Redis answered at once and wrote nothing').not.toContain('could not confirm');
      expect(message).toContain('nothing changed');
    } finally {
      await admin.config('SET', 'maxmemory', '0').catch(() => {});
      admin.disconnect();
      await store.close();
    }
  });
});
