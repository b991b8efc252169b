import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import type { ThreadMessenger } from '../conversation/thread-messenger.js';
import { createThreadWorker } from '../conversation/thread-worker.js';
import { createMemoryStore } from '../store/memory-store.js';
import type { StateStore } from '../store/state-store.js';
import { newStepId } from '../store/redis-keys.js';
import { newThreadState } from '../store/thread-state.js';
import { createExpirySweeper } from './expiry-sweeper.js';
import { evaluation, makeStep } from './pending-step.test-support.js';

const logger = pino({ level: 'silent' });
const MINUTE = 60_000;

/**
 * ff388b9 made a reminder's claim a 10-minute lease (REMINDER_LEASE_MS) that only `releaseReminder`
 * (Slack failed somewhere) and `finishReminder` let go of early. Neither runs when `remindDue` throws
 * after the claim (here: one Redis error on the lease renewal, `keepReminder`, a blip a failover or
 * reconnect gives): the live sender just logs `reminder-failed` and keeps the lease it will never use.
 * Before, the reminder came due again at `until` (2 minutes); now no sweep of any replica may claim
 * it for 10 minutes. A reminder due less than that before the request expires is then never sent
 * ("no reminders after expiry"). The sender now lets go of the claim when it throws.
 */
describe('a reminder whose sender hit one transient store error after claiming it', () => {
  async function scenario(expiresInMinutes: number, sweepUntilMinute: number): Promise<string[]> {
    const start = 1_900_000_000_000;
    let clock = start;
    const memory = createMemoryStore({ now: () => clock });
    let failOnce = true;
    const store: StateStore = {
      ...memory,
      async keepReminder(stepId, claim, leaseMs) {
        if (failOnce) {
          failOnce = false;
          throw new Error('Connection is closed.');
        }
        return memory.keepReminder(stepId, claim, leaseMs);
      },
    };
    const policy = evaluation({ approvers: [{ kind: 'user' as const, userId: 'U0OPS1' }] });
    const base = makeStep([{ approvalId: 'apv-1', policy }], { createdAt: start - 10 * MINUTE, remindAt: start, expiresAt: start + expiresInMinutes * MINUTE, cardTs: '1700000000.000200' });
    const step = { ...base, stepId: newStepId(base.threadKey) };
    const token = (await store.tryLock(step.threadKey, 60_000))!;
    const fence = { threadKey: step.threadKey, token };
    await store.createStep({ step, thread: { ...newThreadState(step, start - 10 * MINUTE), pendingStepId: step.stepId }, ttlMs: 3_600_000 * 4, audit: [], fence });
    expect(await store.releaseLockIfIdle(fence, 60_000)).toBe('released');

    const posts: string[] = [];
    const messenger = {
      updateStepCard: async () => {},
      updateStepCopy: async () => {},
      postNotice: async () => {},
      postMention: async ({ channel, text }: { channel: string; text: string }) => void posts.push(`${new Date(clock).toISOString()} ${channel} ${text}`),
    } as unknown as ThreadMessenger;
    const worker = createThreadWorker({ store, logger, handle: async () => {} });
    const sweeper = createExpirySweeper({ store, messenger, worker, logger, now: () => clock });

    // Due: the sweep claims it and fails on the store once (logged as reminder-failed).
    await sweeper.sweepOnce();
    if (posts.length > 0) throw new Error('posted despite the error');
    // Later sweeps of the same live replica, every minute until just before the expiry.
    for (let minute = 1; minute < sweepUntilMinute; minute += 1) {
      clock = start + minute * MINUTE;
      await sweeper.sweepOnce();
    }
    return posts.filter((post) => post.includes('Approval still needed'));
  }

  it('is still sent a retry pause later, before the request expires', async () => {
    expect(await scenario(8, 8), 'the reminder was never sent before the request expired').toHaveLength(1);
  });

  it('is sent again once the retry pause (2 minutes) is over, not once the 10-minute lease runs out', async () => {
    const sent = await scenario(60, 12);
    expect(sent).toHaveLength(1);
    expect(sent[0]?.slice(0, 24)).toBe(new Date(1_900_000_000_000 + 2 * MINUTE).toISOString());
  });
});
