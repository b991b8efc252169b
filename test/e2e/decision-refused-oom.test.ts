import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedisServer, type RedisServerHandle } from '../helpers/redis-server.js';
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
      const now = Date.now();
      const threadTs = `${Math.floor(now / 1000)}.000100`;
      const step0 = makeStep([{ approvalId: 'apv1', input: { namespace: 'staging' }, policy: evaluatePolicy({ policy: config.policy, toolName: 'scale', channel: 'C0OPS', input: {} }) }], { requesterId: 'U0REQUESTER', createdAt: now, threadTs });
      step0.calls[0]!.toolName = 'scale';
      const threadKey = `${step0.teamId}:${step0.channel}:${threadTs}`;
      const step = { ...step0, threadKey, stepId: newStepId(threadKey) };
      const token = (await store.tryLock(threadKey, 60_000))!;
      await store.createStep({ step, thread: { ...newThreadState(step, 1), threadKey, pendingStepId: step.stepId }, ttlMs: 60_000, audit: [], fence: { threadKey, token } });
      await store.releaseLockIfIdle({ threadKey, token }, 60_000);

      // Redis full: every write is refused (reads still answered).
      await admin.config('SET', 'maxmemory-policy', 'noeviction');
      await admin.config('SET', 'maxmemory', '1');

      const audit = createMemoryAuditLog({ logger });
      const decider = createCallDecider({
        store,
        messenger: { updateStepCard: async () => {} } as unknown as ThreadMessenger,
        worker: {
          submit: async () => {},
          pickUp: async () => false,
          startPickUp: async () => false,
          room: () => 0,
          idle: async () => {},
          queueing: { mode: 'drain', lockTtlMs: 60_000 },
          drainClaimed: async () => {},
        },
        logger,
        audit,
        resolveGroups: async () => new Map(),
        evaluateInput: async ({ call, input }) => evaluatePolicy({ policy: config.policy, toolName: call.toolName, channel: 'C0OPS', input }),
      });
      const outcome = await decider.record(
        { stepId: step.stepId, approvalId: 'apv1', userId: 'U0ALICE', origin: { teamId: step.teamId, channel: step.channel, membership: 'member' }, action: { kind: 'approve', version: 0 } },
        { storeWaitMs: 2_000 },
      );
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
