import { randomUUID } from 'node:crypto';
import { pino } from 'pino';
import { describe, expect, inject, it } from 'vitest';
import type { ThreadMessenger } from '../conversation/thread-messenger.js';
import { createThreadWorker } from '../conversation/thread-worker.js';
import { createMemoryStore } from '../store/memory-store.js';
import { createRedisStore } from '../store/redis-store.js';
import type { StateStore } from '../store/state-store.js';
import { newStepId } from '../store/redis-keys.js';
import { newThreadState } from '../store/thread-state.js';
import { createExpirySweeper } from './expiry-sweeper.js';
import { evaluation, makeStep } from './pending-step.test-support.js';
import { deferred } from '../../test/helpers/deferred.js';

const logger = pino({ level: 'silent' });
const MINUTE = 60_000;

/**
 * A fake Slack shared by two replicas: what each thread shows. `postMention` honours
 * `unlessPostedAfter` as the Web API messenger does (reads the thread first, posts nothing if the
 * same text is already there).
 */
function fakeSlack() {
  const posts: Array<{ channel: string; threadTs: string; text: string; by: string }> = [];
  const messenger = (by: string, beforePost: () => Promise<void> = async () => {}, afterPost: () => Promise<void> = async () => {}) =>
    ({
      updateStepCard: async () => {},
      updateStepCopy: async () => {},
      postNotice: async () => {},
      postMention: async ({ channel, threadTs, text, unlessPostedAfter }: { channel: string; threadTs: string; text: string; unlessPostedAfter?: string }) => {
        if (unlessPostedAfter !== undefined && posts.some((post) => post.channel === channel && post.threadTs === threadTs && post.text === text)) return;
        // The request is on its way to Slack (a slow Slack: timeouts, a 429's Retry-After, several places before this one).
        await beforePost();
        posts.push({ channel, threadTs, text, by });
        await afterPost();
      },
    }) as unknown as ThreadMessenger;
  return { posts, messenger };
}

/**
 * The reminder claim (`claimReminder`) is a lease of REMINDER_RETRY_MIN_MS (2 minutes) on a first
 * try, measured from the sweep's start, and nothing checks it again before each post. A sender whose
 * posts take longer than that (a reminder going to the thread, channel copies and several DM copies
 * while Slack is slow: each post may take its 15 s timeout; a 429 pauses the client's whole queue for
 * Retry-After, three times; a retry also reads every place first) loses its claim to another
 * replica's sweep while it is still posting: both post, and approvers are pinged twice, which the
 * commit promises cannot happen ("exactly one claimant").
 */
describe('a reminder whose sender is slower than its claim', () => {
  it('is posted once in the thread, not once by each of two replicas', async () => {
    const store = createRedisStore({ url: inject('redisUrl'), keyPrefix: `test:${randomUUID()}:` });
    const start = 1_900_000_000_000;
    try {
      const base = makeStep(['apv-1'], {
        createdAt: start - 10 * MINUTE,
        remindAt: start,
        expiresAt: start + 60 * MINUTE,
        cardTs: '1700000000.000200',
      });
      const step = { ...base, stepId: newStepId(base.threadKey), calls: base.calls.map((call) => ({ ...call, policy: evaluation({ approvers: [{ kind: 'user', userId: 'U0OPS1' }] }) })) };
      const token = (await store.tryLock(step.threadKey, 60_000))!;
      const fence = { threadKey: step.threadKey, token };
      await store.createStep({ step, thread: { ...newThreadState(step, start - 10 * MINUTE), pendingStepId: step.stepId }, ttlMs: 3_600_000 * 4, audit: [], fence });
      expect(await store.releaseLockIfIdle(fence, 60_000)).toBe('released');

      const slack = fakeSlack();
      const worker = createThreadWorker({ store, logger, handle: async () => {} });
      // Replica A: its post reaches Slack only after replica B's sweep, 2 minutes and 1 second later.
      const aReachedSlack = deferred();
      const aMayPost = deferred();
      const clockA = start;
      let clockB = start;
      const replicaA = createExpirySweeper({
        store,
        messenger: slack.messenger('A', async () => {
          aReachedSlack.resolve();
          await aMayPost.promise;
        }),
        worker,
        logger,
        now: () => clockA,
      });
      const replicaB = createExpirySweeper({ store, messenger: slack.messenger('B'), worker, logger, now: () => clockB });

      const sweepA = replicaA.sweepOnce();
      await aReachedSlack.promise;
      // B sweeps while A is still posting, after A's claim ran out.
      clockB = start + 2 * MINUTE + 1_000;
      await replicaB.sweepOnce();
      aMayPost.resolve();
      await sweepA;

      const reminders = slack.posts.filter((post) => post.text.includes('Approval still needed'));
      expect(reminders.map((post) => `${post.by} ${post.channel}/${post.threadTs}`), 'the thread was pinged by both replicas').toHaveLength(1);
    } finally {
      await store.close();
    }
  });

  it('reaching ten approvers by DM while every post takes 15 s (within the client timeout), pings each once', async () => {
    const store = createRedisStore({ url: inject('redisUrl'), keyPrefix: `test:${randomUUID()}:` });
    const start = 1_900_000_000_000;
    try {
      const approvers = Array.from({ length: 10 }, (_, index) => `U0OPS${index}`);
      const policy = evaluation({ approvers: approvers.map((userId) => ({ kind: 'user' as const, userId })), notify: { thread: true, channels: [], dmApprovers: true } } as never);
      const base = makeStep([{ approvalId: 'apv-1', policy }], { createdAt: start - 10 * MINUTE, remindAt: start, expiresAt: start + 60 * MINUTE, cardTs: '1700000000.000200' });
      const copies = approvers.map((userId, index) => ({ kind: 'dm' as const, channel: `D0${index}`, ts: `1700000000.00100${index}`, userId }));
      const step = { ...base, stepId: newStepId(base.threadKey) };
      const token = (await store.tryLock(step.threadKey, 60_000))!;
      const fence = { threadKey: step.threadKey, token };
      await store.createStep({ step, thread: { ...newThreadState(step, start - 10 * MINUTE), pendingStepId: step.stepId }, ttlMs: 3_600_000 * 4, audit: [], fence });
      for (const copy of copies) await store.recordCardCopy(step.stepId, copy);
      expect((await store.getStep(step.stepId))?.copies).toHaveLength(10);
      expect(await store.releaseLockIfIdle(fence, 60_000)).toBe('released');

      const slack = fakeSlack();
      const worker = createThreadWorker({ store, logger, handle: async () => {} });
      // One clock for both replicas (real time). Slack is slow: each of A's posts takes 15 s, the
      // client's timeout. B's sweep, every 5 s, runs when A's claim has run out.
      let clock = start;
      let bSwept: Promise<void> | undefined;
      const replicaB = createExpirySweeper({ store, messenger: slack.messenger('B'), worker, logger, now: () => clock });
      const replicaA = createExpirySweeper({
        store,
        messenger: slack.messenger('A', async () => {
          clock += 15_000;
          if (clock > start + 2 * MINUTE && bSwept === undefined) {
            bSwept = replicaB.sweepOnce();
            await bSwept;
          }
        }),
        worker,
        logger,
        now: () => clock,
      });
      await replicaA.sweepOnce();
      expect(bSwept, `B swept while A was posting; posts: ${JSON.stringify(slack.posts)}`).toBeDefined();

      const reminders = slack.posts.filter((post) => post.text.includes('Approval still needed'));
      const places = reminders.map((post) => `${post.channel}/${post.threadTs}`);
      expect(new Set(places).size).toBe(11);
      expect(reminders.map((post) => `${post.by} ${post.channel}`), 'places pinged twice, once by each replica').toHaveLength(11);
    } finally {
      await store.close();
    }
  });

  it("stops posting once its claim ran out and another replica took the reminder over, which posts only where it is not yet", async () => {
    const start = 1_900_000_000_000;
    // One clock for both replicas and the store, whose clock the claim's lease runs by.
    let clock = start;
    const store: StateStore = createMemoryStore({ now: () => clock });
    const approvers = ['U0OPS0', 'U0OPS1'];
    const policy = evaluation({ approvers: approvers.map((userId) => ({ kind: 'user' as const, userId })), notify: { thread: true, channels: [], dmApprovers: true } } as never);
    const base = makeStep([{ approvalId: 'apv-1', policy }], { createdAt: start - 10 * MINUTE, remindAt: start, expiresAt: start + 60 * MINUTE, cardTs: '1700000000.000200' });
    const step = { ...base, stepId: newStepId(base.threadKey) };
    const token = (await store.tryLock(step.threadKey, 60_000))!;
    const fence = { threadKey: step.threadKey, token };
    await store.createStep({ step, thread: { ...newThreadState(step, start - 10 * MINUTE), pendingStepId: step.stepId }, ttlMs: 3_600_000 * 4, audit: [], fence });
    for (const [index, userId] of approvers.entries()) await store.recordCardCopy(step.stepId, { kind: 'dm', channel: `D0${index}`, ts: `1700000000.00100${index}`, userId });
    expect(await store.releaseLockIfIdle(fence, 60_000)).toBe('released');

    const slack = fakeSlack();
    const worker = createThreadWorker({ store, logger, handle: async () => {} });
    let bSwept: Promise<void> | undefined;
    const replicaB = createExpirySweeper({ store, messenger: slack.messenger('B'), worker, logger, now: () => clock });
    // Replica A stalls after its first post (a long GC pause, a hung connection) past its claim's lease: B's sweep takes the reminder over.
    const replicaA = createExpirySweeper({
      store,
      messenger: slack.messenger('A', undefined, async () => {
        if (bSwept !== undefined) return;
        clock += 11 * MINUTE;
        bSwept = replicaB.sweepOnce();
        await bSwept;
      }),
      worker,
      logger,
      now: () => clock,
    });
    await replicaA.sweepOnce();
    expect(bSwept, `B swept while A was posting; posts: ${JSON.stringify(slack.posts)}`).toBeDefined();

    const reminders = slack.posts.filter((post) => post.text.includes('Approval still needed'));
    expect(reminders.map((post) => `${post.by} ${post.channel}`), 'A posted on after it lost its claim').toEqual(['A C0OPS', 'B D00', 'B D01']);
  });
});
