import { randomUUID } from 'node:crypto';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedisServer, type RedisServerHandle } from '../helpers/redis-server.js';
import { startReplyLosingProxy } from '../helpers/reply-losing-proxy.js';
import { waitFor } from './harness.js';
import { createMemoryAuditLog } from '../../src/audit/memory-audit-log.js';
import { parseConfigFile } from '../../src/config/config-file.js';
import type { ThreadMessenger } from '../../src/conversation/thread-messenger.js';
import { newStepId } from '../../src/store/redis-keys.js';
import { createRedisStore } from '../../src/store/redis-store.js';
import { newThreadState } from '../../src/store/thread-state.js';
import { createCallDecider } from '../../src/approvals/decide-call.js';
import { makeStep } from '../../src/approvals/pending-step.test-support.js';
import { evaluatePolicy } from '../../src/approvals/policy/evaluate-policy.js';

const config = parseConfigFile(
  `
policy:
  rules:
    - name: prod scaling
      tools: [scale]
      approval: always
      approvers: [U0ALICE]
`,
  'test.yml',
);
const logger = pino({ level: 'silent' });

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
      const now = Date.now();
      const threadTs = `${Math.floor(now / 1000)}.000100`;
      const step0 = makeStep([{ approvalId: 'apv1', input: { namespace: 'staging' }, policy: evaluatePolicy({ policy: config.policy, toolName: 'scale', channel: 'C0OPS', input: {} }) }], { requesterId: 'U0REQUESTER', createdAt: now, threadTs });
      step0.calls[0]!.toolName = 'scale';
      const threadKey = `${step0.teamId}:${step0.channel}:${threadTs}`;
      const step = { ...step0, threadKey, stepId: newStepId(threadKey) };
      const token = (await direct.tryLock(threadKey, 60_000))!;
      await direct.createStep({ step, thread: { ...newThreadState(step, 1), threadKey, pendingStepId: step.stepId }, ttlMs: 60_000, audit: [], fence: { threadKey, token } });
      await direct.releaseLockIfIdle({ threadKey, token }, 60_000);

      const audit = createMemoryAuditLog({ logger });
      const decider = createCallDecider({
        store,
        messenger: { updateStepCard: async () => {} } as unknown as ThreadMessenger,
        worker: { submit: async () => {}, pickUp: async () => false, startPickUp: async () => false, room: () => 0, idle: async () => {}, queueing: { mode: 'drain', lockTtlMs: 60_000 }, drainClaimed: async () => {} },
        logger,
        audit,
        resolveGroups: async () => new Map(),
        evaluateInput: async ({ call, input }) => evaluatePolicy({ policy: config.policy, toolName: call.toolName, channel: 'C0OPS', input }),
      });
      const outcome = await decider.record({
        stepId: step.stepId,
        approvalId: 'apv1',
        userId: 'U0ALICE',
        origin: { teamId: step.teamId, channel: step.channel, membership: 'member' },
        action: { kind: 'approve', version: 0, grant: { scope: 'channel', hours: 1, identicalArgumentsOnly: false } },
      });
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
