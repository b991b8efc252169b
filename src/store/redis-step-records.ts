import { randomUUID } from 'node:crypto';
import type { CardCopy } from '../approvals/pending-step.js';
import { FencedError } from './fenced-error.js';
import { repliesOf } from './redis-replies.js';
import type { ScriptRunner } from './redis-script-commands.js';
import { ATTEMPT_TTL_MS, type RedisStoreContext } from './redis-store-context.js';
import type { ThreadReply } from './redis-thread-history.js';
import type { StepStore, ThreadStore } from './state-store.js';
import { copyField, stepData, stepFromRecord } from './step-record.js';

export type RedisStepRecords = Pick<StepStore, 'createStep' | 'getStep' | 'getStepAndThread' | 'setStepCard' | 'replaceStepCard' | 'recordCardCopy'>;

/**
 * A pending step's record: created with its thread's save, read, and its card's ts and copies
 * recorded on it (`StepStore`; its decisions: `redis-step-commits.ts`).
 */
export function createRedisStepRecords({
  redis,
  run,
  keys,
  histories,
  auditMaxLength,
  prepare,
  logStored,
  threads,
}: RedisStoreContext & { threads: Pick<ThreadStore, 'getThread'> }): RedisStepRecords {
  const steps: RedisStepRecords = {
    // Always named (a fresh attempt unless given): a resend after a lost reply finds the thread newer
    // than its patch was planned from, and sent again as a rewrite it would write the step and its
    // `approval-requested` records a second time.
    async createStep({ step, thread, ttlMs, audit, fence, attempt = randomUUID() }) {
      const { prepared, args } = prepare(audit);
      const stepAt = keys.ofStep(step.stepId);
      const threadAt = keys.ofThread(thread.threadKey);
      const reply = await histories.write(thread, (write) =>
        run.csCreateStep(
          stepAt.step(step.stepId),
          threadAt.thread(thread.threadKey),
          stepAt.schedule('expiry'),
          stepAt.schedule('reminder'),
          keys.ofChannel(step.teamId, step.channel).pending(step.teamId, step.channel),
          stepAt.audit(),
          keys.ofThread(fence.threadKey).fence(fence.threadKey),
          threadAt.messages(thread.threadKey),
          stepAt.openSteps(step.teamId),
          stepAt.openStepTeams(),
          stepAt.schedule('escalation'),
          // The thread's shard, which is its step's (`newStepId`).
          threadAt.attempt(attempt),
          fence.token,
          stepData(step),
          ttlMs,
          step.stepId,
          step.expiresAt ?? '',
          step.remindAt ?? '',
          step.createdAt,
          write.metaJson,
          ttlMs,
          auditMaxLength,
          write.historyJson,
          step.teamId,
          step.escalation?.nextAt ?? '',
          ATTEMPT_TTL_MS,
          ...args,
        ),
      );
      // Otherwise written: now, or ('written') before, by this named write whose reply was lost (`namedWrite`).
      if (reply === 'fenced') throw new FencedError(fence.threadKey);
      logStored(prepared);
    },

    async getStep(stepId) {
      return stepFromRecord(await redis.hgetall(keys.ofStep(stepId).step(stepId)));
    },

    async getStepAndThread(stepId, threadKey) {
      // A cluster may keep them on different nodes (a step id from elsewhere): two reads at once.
      if (redis.isCluster) {
        const [step, thread] = await Promise.all([steps.getStep(stepId), threads.getThread(threadKey)]);
        return { step, thread };
      }
      const at = keys.ofThread(threadKey);
      const pipeline = redis.pipeline();
      pipeline.hgetall(keys.ofStep(stepId).step(stepId));
      (pipeline as unknown as ScriptRunner).csReadThread(at.thread(threadKey), at.messages(threadKey));
      const [record, threadReply] = repliesOf(await pipeline.exec());
      return { step: stepFromRecord(record as Record<string, string>), thread: histories.read(threadKey, threadReply as ThreadReply) };
    },

    async setStepCard(stepId, cardTs, link) {
      const reply = (await run.csSetStepCard(keys.ofStep(stepId).step(stepId), cardTs, link ?? '')) as [string, string] | null;
      return reply === null ? undefined : { revision: Number(reply[0]), cardTs: reply[1] };
    },

    async replaceStepCard(stepId, { from, to, link }) {
      return (await run.csReplaceStepCard(keys.ofStep(stepId).step(stepId), from, to, link ?? '')) === 1;
    },

    async recordCardCopy(stepId, copy) {
      const recorded = (await run.csRecordCardCopy(keys.ofStep(stepId).step(stepId), copyField(copy), JSON.stringify(copy))) as string | null;
      return recorded === null ? undefined : (JSON.parse(recorded) as CardCopy);
    },
  };
  return steps;
}
