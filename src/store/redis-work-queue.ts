import { randomUUID } from 'node:crypto';
import { FencedError } from './fenced-error.js';
import { newTokenNonce } from './fencing-token.js';
import { NEWER_SCHEMA, unlessNewerSchema } from './newer-schema-error.js';
import { stepIdPrefix } from './redis-keys.js';
import type { ReadyWaiter } from './redis-ready-waiter.js';
import { mergeByScore, repliesOf } from './redis-replies.js';
import type { ScriptRunner } from './redis-script-commands.js';
import { ATTEMPT_TTL_MS, FENCE_TTL_MS, QUEUE_TTL_MS, READY_HINTS_KEPT, type RedisStoreContext } from './redis-store-context.js';
import type { ThreadReply } from './redis-thread-history.js';
import type { WorkQueueStore } from './state-store.js';
import { stepFromRecord } from './step-record.js';

/**
 * Entries of a shard's index of threads with work that one `stalledThreads` read looks at, at most:
 * the threads live holders are draining that it passes over, so one sweep's Redis time stays
 * bounded. Only more live turns than this in one shard, all older than a lost hand-off, would still
 * hide it (16,000 with the default 16 shards).
 */
const STALLED_THREADS_SCANNED = 1_000;

/**
 * A thread's queue of work and its lock (with its fencing token), the hand-off of threads to the
 * workers (`ready`), and the indexes the recovery sweep reads (`WorkQueueStore`).
 */
export function createRedisWorkQueue({
  redis,
  run,
  keys,
  histories,
  now,
  isClosed,
  saveThreadArguments,
  lowestAcrossShards,
  ready,
}: RedisStoreContext & { ready: ReadyWaiter }): WorkQueueStore {
  /** HAND_BACK_WORK_SCRIPT's keys and arguments; `finished` '' for none. */
  const handBackArgumentsOf = (fence: { threadKey: string; token: string }, finished: string) => {
    const { threadKey } = fence;
    const at = keys.ofThread(threadKey);
    return [at.queue(threadKey), at.lock(threadKey), at.inflight(threadKey), at.busy(), at.fence(threadKey), at.ready(), fence.token, finished, threadKey, READY_HINTS_KEPT] as const;
  };

  return {
    async enqueueWork(threadKey, item, lockTtlMs, { attempt = randomUUID() } = {}) {
      const at = keys.ofThread(threadKey);
      const claim = await run.csEnqueueAndLock(
        at.queue(threadKey),
        at.lock(threadKey),
        at.busy(),
        at.fence(threadKey),
        at.inflight(threadKey),
        at.attempt(attempt),
        item,
        lockTtlMs,
        QUEUE_TTL_MS,
        threadKey,
        now(),
        FENCE_TTL_MS,
        ATTEMPT_TTL_MS,
        newTokenNonce(),
      );
      if (!Array.isArray(claim)) return undefined;
      const [token, first, leftover] = claim as [string, string, number];
      return { token, item: first, ...(leftover === 1 ? { leftover: true as const } : {}) };
    },

    async handOffWork(threadKey, item, { attempt = randomUUID() } = {}) {
      const at = keys.ofThread(threadKey);
      // The attempt rides in the command, so ioredis's resend after a lost reply carries it too.
      await run.csHandOffWork(at.queue(threadKey), at.lock(threadKey), at.busy(), at.ready(), at.attempt(attempt), item, QUEUE_TTL_MS, threadKey, now(), READY_HINTS_KEPT, ATTEMPT_TTL_MS);
    },

    async nextReadyThreads(options) {
      if (isClosed()) return [];
      return ready.next(options);
    },

    async returnReadyThreads(threadKeys) {
      const byList = new Map<string, string[]>();
      for (const threadKey of threadKeys) {
        const list = keys.ofThread(threadKey).ready();
        byList.set(list, [...(byList.get(list) ?? []), threadKey]);
      }
      // LPUSH puts its last argument first: reversed, the hints keep their order at the head.
      await Promise.all([...byList].map(([list, returned]) => redis.lpush(list, ...returned.reverse())));
    },

    async tryLock(threadKey, ttlMs) {
      const at = keys.ofThread(threadKey);
      const token = await run.csTryLock(at.lock(threadKey), at.fence(threadKey), ttlMs, now(), FENCE_TTL_MS, newTokenNonce());
      return typeof token === 'string' ? token : undefined;
    },

    async lockAndTake(threadKey, ttlMs) {
      const at = keys.ofThread(threadKey);
      const claim = await run.csLockAndTake(
        at.lock(threadKey),
        at.fence(threadKey),
        at.queue(threadKey),
        at.inflight(threadKey),
        at.thread(threadKey),
        at.messages(threadKey),
        ttlMs,
        now(),
        FENCE_TTL_MS,
        QUEUE_TTL_MS,
        at.step(''),
        stepIdPrefix(threadKey),
        newTokenNonce(),
      );
      if (!Array.isArray(claim)) return undefined;
      const [token, item, leftover, stepId, threadReply, stepFields] = claim as [string, string | null | false | undefined, number?, string?, ThreadReply?, string[]?];
      if (typeof item !== 'string') return { token };
      const taken = { token, item, ...(leftover === 1 ? { leftover: true as const } : {}) };
      if (stepId === undefined || stepFields === undefined) return taken;
      // A step or thread a newer release wrote is read again by the resume, which then says so (`NewerSchemaError`).
      const read = unlessNewerSchema(() => ({ stepId, step: stepFromRecord(stepFields), thread: histories.read(threadKey, threadReply ?? null) }));
      return read === NEWER_SCHEMA ? taken : { ...taken, read };
    },

    async takeWork(fence) {
      const { threadKey } = fence;
      const at = keys.ofThread(threadKey);
      const [status, item] = (await run.csTakeWork(at.queue(threadKey), at.inflight(threadKey), at.fence(threadKey), fence.token, QUEUE_TTL_MS)) as [string, string?];
      if (status === 'fenced') throw new FencedError(threadKey);
      return item;
    },

    async takeLeftover(threadKey) {
      return (await redis.lindex(keys.ofThread(threadKey).inflight(threadKey), 0)) ?? undefined;
    },

    async finishWork(fence, finished, lockTtlMs, closing, { attempt, handBack = false } = {}) {
      const { threadKey } = fence;
      const at = keys.ofThread(threadKey);
      const finishArguments = [at.queue(threadKey), at.lock(threadKey), at.inflight(threadKey), at.busy(), at.fence(threadKey), fence.token, finished, lockTtlMs, threadKey, QUEUE_TTL_MS] as const;
      const handBackArguments = handBackArgumentsOf(fence, finished);
      const finishOn = (runner: ScriptRunner) => (handBack ? runner.csHandBackWork(...handBackArguments) : runner.csFinishWork(...finishArguments));
      let finishReply: unknown;
      if (closing) {
        // One MULTI (one round trip, one slot: the thread's keys share its tag). Both scripts check
        // the same fence inside one transaction, so either both write or neither does.
        let sends = 0;
        const saveReply = await histories.write(closing.thread, async (write) => {
          // Named for as long as the caller may send the finish again (while its lock can be its own).
          const named = attempt ? { attempt, attemptTtlMs: Math.max(ATTEMPT_TTL_MS, lockTtlMs) } : {};
          const save = saveThreadArguments({ ...closing, fence, settled: closing.settled ?? false, write, ...named });
          sends += 1;
          // A patch refused as stale comes back as a rewrite; the item is finished by then.
          if (sends > 1) return run.csSaveThread(...save);
          const transaction = redis.multi() as unknown as ScriptRunner & { exec(): Promise<Array<[Error | null, unknown]> | null> };
          transaction.csSaveThread(...save);
          finishOn(transaction);
          const [saved, finishedReply] = repliesOf(await transaction.exec());
          finishReply = finishedReply;
          return saved;
        });
        if (saveReply === 'fenced') throw new FencedError(threadKey);
        // The named save ran before, in one transaction with this finish (its reply lost): the item
        // is finished, and a fenced finish now only says the thread is another process's.
        if (saveReply === 'written' && (finishReply as [string])[0] === 'fenced') return undefined;
      } else finishReply = await finishOn(run);
      const [status, item] = finishReply as [string, string?];
      if (status === 'fenced') throw new FencedError(threadKey);
      return item;
    },

    async busyThreads({ limit, before }) {
      // Scored by when work was last queued (the enqueue and hand-off scripts' ZADD).
      return lowestAcrossShards((shard) => shard.busy(), before ?? '+inf', limit);
    },

    async stalledThreads({ limit, before }) {
      // One script per shard, each on its node (the lock keys share the shard's slot), merged by when work was queued.
      const perShard = await Promise.all(
        keys.shards().map((shard) => run.csStalledThreads(shard.busy(), before, limit, STALLED_THREADS_SCANNED, shard.lock('')) as Promise<string[]>),
      );
      return mergeByScore(perShard, limit);
    },

    async extendLock(fence, ttlMs) {
      const at = keys.ofThread(fence.threadKey);
      const renewed = await run.csExtendLock(at.lock(fence.threadKey), at.fence(fence.threadKey), fence.token, ttlMs);
      return renewed === 1 ? 'current' : renewed === -1 ? 'missing' : 'taken';
    },

    async fenceState(fence) {
      const newest = await redis.get(keys.ofThread(fence.threadKey).fence(fence.threadKey));
      return newest === null ? 'missing' : newest === fence.token ? 'current' : 'taken';
    },

    async releaseLockIfIdle(fence, lockTtlMs, { handBack = false } = {}) {
      const { threadKey } = fence;
      const at = keys.ofThread(threadKey);
      if (handBack) {
        const [status] = (await run.csHandBackWork(...handBackArgumentsOf(fence, ''))) as [string];
        return status === 'fenced' ? 'fenced' : 'released';
      }
      return (await run.csReleaseIfIdle(at.queue(threadKey), at.lock(threadKey), at.inflight(threadKey), at.busy(), at.fence(threadKey), fence.token, lockTtlMs, threadKey)) as 'more' | 'released' | 'fenced';
    },
  };
}
