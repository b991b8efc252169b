import type { PendingStep } from '../approvals/pending-step.js';
import { NEWER_SCHEMA, unlessNewerSchema } from './newer-schema-error.js';
import { pairs } from './redis-replies.js';
import type { RedisStoreContext } from './redis-store-context.js';
import type { StepStore } from './state-store.js';
import { stepFromRecord } from './step-record.js';

/** The open steps of a channel or a workspace, from the indexes the step scripts keep (`StepStore`). */
export function createRedisOpenSteps({ redis, keys }: RedisStoreContext): Pick<StepStore, 'listPendingSteps' | 'listOpenSteps' | 'teamsWithOpenSteps'> {
  return {
    async listPendingSteps({ teamId, channel, limit }) {
      const index = keys.ofChannel(teamId, channel).pending(teamId, channel);
      const open = [];
      for (const stepId of await redis.zrevrange(index, 0, limit * 4)) {
        const fields = await redis.hgetall(keys.ofStep(stepId).step(stepId));
        // A step a newer release wrote is open for all this one knows: it stays indexed for the releases that list it.
        const step = unlessNewerSchema(() => stepFromRecord(fields));
        if (step === NEWER_SCHEMA) continue;
        if (step?.phase === 'pending') open.push(step);
        else await redis.zrem(index, stepId);
        if (open.length >= limit) break;
      }
      return open;
    },

    async listOpenSteps({ teamId, limit }) {
      // Each shard keeps its own index of the workspace's open steps (the scripts that open and
      // close a step write it in the step's slot); closing takes a step off in the same script, so
      // an index holds open steps and those whose record expired (dropped here).
      const perShard = await Promise.all(keys.shards().map(async (shard) => ({ index: shard.openSteps(teamId), entries: await redis.zrevrange(shard.openSteps(teamId), 0, limit - 1, 'WITHSCORES') })));
      const newest = perShard
        .flatMap(({ index, entries }) => pairs(entries).map(([stepId, score]) => ({ index, stepId, score })))
        .sort((left, right) => right.score - left.score)
        .slice(0, limit);
      const records = await Promise.all(newest.map(({ stepId }) => redis.hgetall(keys.ofStep(stepId).step(stepId))));
      const open: PendingStep[] = [];
      for (const [position, fields] of records.entries()) {
        // A step a newer release wrote stays indexed, as in `listPendingSteps`.
        const step = unlessNewerSchema(() => stepFromRecord(fields));
        if (step === NEWER_SCHEMA) continue;
        const entry = newest[position] as { index: string; stepId: string };
        if (step?.phase === 'pending') open.push(step);
        else if (!step) await redis.zrem(entry.index, entry.stepId);
      }
      return open;
    },

    async teamsWithOpenSteps() {
      const perShard = await Promise.all(keys.shards().map((shard) => redis.smembers(shard.openStepTeams())));
      return [...new Set(perShard.flat())];
    },
  };
}
