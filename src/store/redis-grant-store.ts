import type { Grant } from '../approvals/grant.js';
import type { RedisDurableWrites } from './redis-durable-writes.js';
import { REVOKE_GRANT_SCRIPT } from './redis-grant-scripts.js';
import type { RedisStoreContext } from './redis-store-context.js';
import type { GrantStore } from './state-store.js';
import { notSent } from './write-not-run.js';

/** A channel's standing grants, listed live by Redis's clock and revoked as a withdrawal (`GrantStore`). */
export function createRedisGrantStore({
  redis,
  run,
  keys,
  auditMaxLength,
  clockArgument,
  prepare,
  logStored,
  durable: { withdraw },
}: RedisStoreContext & { durable: Pick<RedisDurableWrites, 'withdraw'> }): GrantStore {
  return {
    async listTeamGrants({ teamId }) {
      const perShard = await Promise.all(keys.shards().map((shard) => redis.smembers(shard.grantChannels(teamId))));
      const live: Grant[] = [];
      for (const channel of new Set(perShard.flat())) live.push(...(await this.listGrants({ teamId, channel })));
      return live.sort((left, right) => left.createdAt - right.createdAt);
    },

    async listGrants({ teamId, channel, hideEndedBy }) {
      const grants = keys.ofChannel(teamId, channel).grants(teamId, channel);
      // Live and removed by Redis's clock only (LIST_GRANTS_SCRIPT); the reader's, when given, only leaves out one it thinks over.
      const stored = (await run.csListGrants(grants, clockArgument())) as string[];
      const live = stored.map((json) => JSON.parse(json) as Grant).filter((grant) => hideEndedBy === undefined || grant.expiresAt > hideEndedBy);
      return live.sort((left, right) => left.createdAt - right.createdAt);
    },

    async revokeGrant({ teamId, channel, grantId, audit }) {
      const channelAt = keys.ofChannel(teamId, channel);
      const grants = channelAt.grants(teamId, channel);
      // Before the write: failing here, it was never sent.
      const json = await redis.hget(grants, grantId).catch(notSent);
      if (json === null) return undefined;
      const grant = JSON.parse(json) as Grant;
      const { prepared, args } = prepare([audit(grant)]);
      const scriptKeys = [grants, channelAt.audit()];
      const scriptArguments = [grantId, json, auditMaxLength, ...args];
      const { reply, unconfirmed } = await withdraw({ shard: channelAt.index, script: REVOKE_GRANT_SCRIPT, keys: scriptKeys, args: scriptArguments }, () => run.csRevokeGrant(...scriptKeys, ...scriptArguments));
      if (reply !== 1) return undefined;
      logStored(prepared);
      return unconfirmed ? { grant, unconfirmed } : { grant };
    },
  };
}
