import { randomUUID } from 'node:crypto';
import type { RedisStoreContext } from './redis-store-context.js';
import type { StepStore } from './state-store.js';

/**
 * A step's schedules (expiry, reminder, escalation; `dueSteps`), its reminder's claim, and the
 * index of complete steps (`StepStore`).
 */
export function createRedisStepSchedules({
  redis,
  run,
  keys,
  lowestAcrossShards,
}: RedisStoreContext): Pick<
  StepStore,
  'dueSteps' | 'unschedule' | 'scheduleEscalation' | 'postponeDue' | 'claimReminder' | 'keepReminder' | 'releaseReminder' | 'finishReminder' | 'completedSteps' | 'postponeCompleted'
> {
  return {
    async dueSteps({ kind, now: at, limit }) {
      return lowestAcrossShards((shard) => shard.schedule(kind), at, limit);
    },

    async unschedule(stepId) {
      const at = keys.ofStep(stepId);
      await redis.multi().zrem(at.schedule('expiry'), stepId).zrem(at.schedule('reminder'), stepId).zrem(at.schedule('escalation'), stepId).exec();
    },

    async scheduleEscalation(stepId, at) {
      const schedule = keys.ofStep(stepId).schedule('escalation');
      if (at === undefined) await redis.zrem(schedule, stepId);
      else await redis.zadd(schedule, at, stepId);
    },

    async postponeDue({ kind, stepId, until }) {
      // XX: never adds an entry back; GT: never brings one forward.
      await redis.zadd(keys.ofStep(stepId).schedule(kind), 'XX', 'GT', until, stepId);
    },

    async claimReminder({ stepId, now: at, until, leaseMs, claimant = randomUUID() }) {
      const stepAt = keys.ofStep(stepId);
      const due = (await run.csClaimReminder(stepAt.schedule('reminder'), stepAt.reminderClaim(stepId), stepId, at, until, claimant, leaseMs)) as string | null;
      return due === null ? undefined : { dueAt: Number(due), until, claimant };
    },

    async keepReminder(stepId, claim, leaseMs) {
      return (await run.csKeepReminder(keys.ofStep(stepId).reminderClaim(stepId), claim.claimant, leaseMs)) === 1;
    },

    async releaseReminder(stepId, claim) {
      await run.csReleaseReminder(keys.ofStep(stepId).reminderClaim(stepId), claim.claimant);
    },

    async finishReminder(stepId, claim) {
      const stepAt = keys.ofStep(stepId);
      await run.csFinishReminder(stepAt.schedule('reminder'), stepAt.reminderClaim(stepId), stepId, claim.until, claim.claimant);
    },

    async completedSteps({ before, limit }) {
      return lowestAcrossShards((shard) => shard.complete(), before, limit);
    },

    async postponeCompleted({ stepId, until }) {
      // As `postponeDue`: XX never adds an entry back, GT never brings one forward.
      await redis.zadd(keys.ofStep(stepId).complete(), 'XX', 'GT', until, stepId);
    },
  };
}
