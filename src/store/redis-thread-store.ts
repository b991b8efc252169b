import { randomUUID } from 'node:crypto';
import { FencedError } from './fenced-error.js';
import { deletedPostId } from './redis-delivery-store.js';
import { repliesOf } from './redis-replies.js';
import type { ScriptRunner } from './redis-script-commands.js';
import type { RedisStoreContext } from './redis-store-context.js';
import type { ThreadReply } from './redis-thread-history.js';
import type { DeliveryStore, ThreadStore } from './state-store.js';

export type RedisThreadStore = Pick<ThreadStore, 'getThread' | 'getThreadAndDeletion' | 'saveThread' | 'createThreadIfAbsent'>;

/** A thread's state, read and saved under its fence (`ThreadStore`; its executing markers: `redis-executing-markers.ts`). */
export function createRedisThreadStore({
  redis,
  run,
  keys,
  histories,
  prepare,
  logStored,
  saveThreadArguments,
  delivery,
}: RedisStoreContext & { delivery: Pick<DeliveryStore, 'wasDeleted'> }): RedisThreadStore {
  const threads: RedisThreadStore = {
    async getThread(threadKey) {
      const at = keys.ofThread(threadKey);
      return histories.read(threadKey, (await run.csReadThread(at.thread(threadKey), at.messages(threadKey))) as ThreadReply);
    },

    async getThreadAndDeletion(threadKey, post) {
      // A cluster may keep the two keys on different nodes: two reads at once.
      if (redis.isCluster) {
        const [thread, deleted] = await Promise.all([threads.getThread(threadKey), delivery.wasDeleted(post)]);
        return { thread, deleted };
      }
      const at = keys.ofThread(threadKey);
      const pipeline = redis.pipeline();
      (pipeline as unknown as ScriptRunner).csReadThread(at.thread(threadKey), at.messages(threadKey));
      pipeline.exists(keys.once(deletedPostId(post)));
      const [threadReply, deleted] = repliesOf(await pipeline.exec());
      return { thread: histories.read(threadKey, threadReply as ThreadReply), deleted: deleted === 1 };
    },

    async saveThread(thread, ttlMs, fence, { settled = false, audit = [], attempt: given } = {}) {
      const { prepared, args } = prepare(audit);
      // A save with records is always named (`namedWrite`): resent after a lost reply, it would be
      // refused as 'stale', sent again as a rewrite and append its records a second time.
      const attempt = given ?? (audit.length > 0 ? randomUUID() : undefined);
      const reply = await histories.write(thread, (write) => run.csSaveThread(...saveThreadArguments({ thread, ttlMs, fence, settled, write, audit: args, ...(attempt ? { attempt } : {}) })));
      if (reply === 'fenced') throw new FencedError(fence.threadKey);
      logStored(prepared);
    },

    async createThreadIfAbsent(thread, ttlMs) {
      const at = keys.ofThread(thread.threadKey);
      const reply = await histories.write(thread, (write) =>
        run.csCreateThreadIfAbsent(at.thread(thread.threadKey), at.messages(thread.threadKey), write.metaJson, ttlMs, write.historyJson), { rewrite: true },
      );
      return reply !== 0;
    },
  };
  return threads;
}
