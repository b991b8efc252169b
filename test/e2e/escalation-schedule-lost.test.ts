import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { describe, expect, inject, it } from 'vitest';
import type { ThreadMessenger } from '../../src/conversation/thread-messenger.js';
import { createRedisStore } from '../../src/store/redis-store.js';
import { newStepId } from '../../src/store/redis-keys.js';
import { newThreadState } from '../../src/store/thread-state.js';
import { createExpirySweeper } from '../../src/approvals/expiry-sweeper.js';
import { evaluation, makeStep } from '../../src/approvals/pending-step.test-support.js';

const logger = pino({ level: 'silent' });
const worker = { submit: async () => {}, pickUp: async () => false, startPickUp: async () => false, room: () => 0, idle: async () => {}, queueing: { mode: 'hand-off' as const, lockTtlMs: 60_000 }, claimTaken: <T>(_threadKey: string, claim: T) => claim, drainClaimed: async () => {} };

/**
 * `createStep` writes the step, its thread, its expiry and reminder schedules in one script, but its
 * first escalation hop with a separate ZADD afterwards. When the connection drops between the two (a
 * failover, a network blip past `maxRetriesPerRequest`, or the process is killed there), the step is
 * stored, open and expiring, but nothing will ever sweep its ladder: the lead is never escalated to.
 * The connection here fails any separate write of the ladder; written in the step's script, none is made.
 */
describe('a step whose escalation schedule write failed after the step was stored', () => {
  it('still escalates when its first hop is due', async () => {
    const keyPrefix = `escalation-schedule-lost:${randomUUID()}:`;
    const url = inject('redisUrl');
    // The replica that opens the step: its connection is lost right when the ZADD of the ladder is sent.
    const client = new Redis(url, { maxRetriesPerRequest: 2 });
    const realZadd = client.zadd.bind(client);
    let dropped = 0;
    (client as unknown as { zadd: (...args: unknown[]) => Promise<unknown> }).zadd = async (...args: unknown[]) => {
      if (String(args[0]).includes('escalation')) {
        dropped += 1;
        throw new Error('Connection is closed.');
      }
      return (realZadd as (...a: unknown[]) => Promise<unknown>)(...args);
    };
    const opener = createRedisStore({ redis: client, keyPrefix });
    // Another replica, whose connection is fine.
    const other = createRedisStore({ url, keyPrefix });
    try {
      const ladder = [{ afterMs: 100, remind: false, addApprovers: [{ kind: 'user' as const, userId: 'U0LEAD' }] }];
      const base = makeStep([{ approvalId: 'apv-1', policy: evaluation({ approvers: [{ kind: 'user', userId: 'U0OPS' }], escalation: ladder }) }]);
      const step = { ...base, stepId: newStepId(base.threadKey) };
      step.escalation = { ladder, rule: { index: 0 }, done: 0, nextAt: step.createdAt + 100 };
      step.expiresAt = step.createdAt + 60_000;
      const token = (await opener.tryLock(step.threadKey, 60_000))!;
      const created = await opener
        .createStep({ step, thread: { ...newThreadState(step, step.createdAt), pendingStepId: step.stepId }, ttlMs: 3_600_000, audit: [], fence: { threadKey: step.threadKey, token } })
        .then(() => 'created', (error: unknown) => `failed: ${(error as Error).message}`);
      // The step itself is stored, open, and would expire.
      expect((await other.getStep(step.stepId))?.phase).toBe('pending');
      expect(await other.dueSteps({ kind: 'expiry', now: step.createdAt + 61_000, limit: 10 })).toEqual([step.stepId]);

      const notices: string[] = [];
      const messenger = {
        postMention: async ({ text }: { text: string }) => void notices.push(text),
        updateStepCard: async () => {},
        updateStepCopy: async () => {},
      } as unknown as ThreadMessenger;
      // Well past the hop and before the expiry: every replica sweeps.
      await createExpirySweeper({ store: other, messenger, worker, logger, now: () => step.createdAt + 30_000 }).sweepOnce();

      expect((await other.getStep(step.stepId))?.escalation?.done).toBe(1);
      expect(notices.filter((text) => text.includes('Escalated'))).toHaveLength(1);
      // The ladder is written with the step, in its one script: no separate write to lose, and no
      // error for a step that was stored.
      expect(dropped).toBe(0);
      expect(created).toBe('created');
    } finally {
      await opener.close();
      await other.close();
    }
  });
});
