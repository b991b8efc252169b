import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedisServer, type RedisServerHandle } from '../helpers/redis-server.js';
import { startReplyLosingProxy } from '../helpers/reply-losing-proxy.js';
import { waitFor } from './harness.js';
import { createRedisStore } from '../../src/store/redis-store.js';
import { click, createTestDecider, storeStepInNewThread } from '../../src/approvals/decide-call.test-support.js';

/**
 * "Approve & allow" (a form: no store wait). Before the decision's write, the store reads the grant's
 * clock (STORE_CLOCK_SCRIPT). That read's connection is cut and Redis stays unreachable: the decision's
 * own write (COMMIT_STEP) is never sent, so nothing can have been recorded. decide-call counts the
 * clock read's failure as the decision's write having maybe run, and tells Alice "I could not confirm
 * whether your approval was recorded ... do not approve again elsewhere until then".
 */
describe('an "Approve & allow" whose grant clock read fails before the decision write is sent', () => {
  let server: RedisServerHandle;
  beforeAll(async () => {
    server = await startRedisServer();
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('is told nothing changed, since the decision write never left the bot', async () => {
    const proxy = await startReplyLosingProxy(server.url, 'grant-clock:', { refuseForMs: 1_500 });
    const keyPrefix = `grant-clock-fail:${randomUUID()}:`;
    const store = createRedisStore({ url: proxy.url, keyPrefix });
    const direct = createRedisStore({ url: server.url, keyPrefix });
    try {
      const step = await storeStepInNewThread(direct, 'scale');

      const { decider } = createTestDecider({ store });
      const outcome = await decider.record(click(step, 'U0ALICE', { kind: 'approve', version: 0, grant: { scope: 'channel', hours: 1, identicalArgumentsOnly: false } }));
      expect(proxy.cut(), 'the clock read was cut').toBe(true);
      // Nothing recorded: the decision's write was never sent.
      const stored = await direct.getStep(step.stepId);
      expect(stored?.decisions).toEqual({});
      expect(stored?.revision).toBe(step.revision);
      expect(await direct.listGrants({ teamId: step.teamId, channel: step.channel })).toEqual([]);
      expect(outcome.recorded).toBe(false);
      const message = outcome.recorded ? '' : outcome.message;
      expect(message, 'told to hold off although the decision write was never sent').not.toContain('could not confirm');
      expect(message).toContain('nothing changed');
    } finally {
      await waitFor(() => proxy.back(), { message: 'the proxy taking connections again' });
      await store.close();
      await direct.close();
      await proxy.close();
    }
  }, 30_000);
});
