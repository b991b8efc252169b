import { randomUUID } from 'node:crypto';
import type { RedisStoreContext } from './redis-store-context.js';
import type { DeletedPost, DeliveryStore } from './state-store.js';

/** Deliveries claimed once, and requests seen deleted (`DeliveryStore`). */
export function createRedisDeliveryStore({ redis, run, keys }: RedisStoreContext): DeliveryStore {
  return {
    async claimOnce(ids, ttlMs, { claimant = randomUUID() } = {}) {
      // Sent together: one round trip on a single server; in a cluster the keys may live on different nodes.
      const results = await Promise.all(ids.map((id) => run.csClaimOnce(keys.once(id), claimant, ttlMs)));
      return results.every((claimed) => claimed === 1);
    },

    async markDeleted({ channel, ts }, ttlMs) {
      await redis.set(keys.once(deletedPostId({ channel, ts })), '1', 'PX', ttlMs);
    },

    async wasDeleted({ channel, ts }) {
      return (await redis.exists(keys.once(deletedPostId({ channel, ts })))) === 1;
    },
  };
}

/** Beside the delivery dedupe's `post:` ids, under the same untagged `once:` prefix. */
export function deletedPostId({ channel, ts }: DeletedPost): string {
  return `deleted:${channel}:${ts}`;
}
