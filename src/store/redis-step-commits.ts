import { randomUUID } from 'node:crypto';
import { stampGrant } from '../approvals/transitions/stamp-grant.js';
import type { StepTransition } from '../approvals/transitions/step-transition.js';
import { newTokenNonce } from './fencing-token.js';
import type { RedisDurableWrites } from './redis-durable-writes.js';
import { COMMIT_STEP_AND_QUEUE_SCRIPT, COMMIT_STEP_SCRIPT } from './redis-step-scripts.js';
import { ATTEMPT_TTL_MS, FENCE_TTL_MS, QUEUE_TTL_MS, READY_HINTS_KEPT, type RedisStoreContext } from './redis-store-context.js';
import type { CommitResult, StepStore } from './state-store.js';
import { stepData } from './step-record.js';
import { notSent } from './write-not-run.js';

/**
 * A step's judged transition committed over the revision it was judged on (`StepStore`): alone,
 * with its thread's resume queued, or with its thread's save (a resume claim).
 */
export function createRedisStepCommits({
  run,
  keys,
  histories,
  now,
  auditMaxLength,
  clockArgument,
  prepare,
  logStored,
  durable: { withdraw },
}: RedisStoreContext & { durable: Pick<RedisDurableWrites, 'withdraw'> }): Pick<StepStore, 'commitStep' | 'commitStepAndQueue' | 'commitStepWithThread'> {
  /**
   * The transition with its grant (if any) stamped by the clock of the shard that stores it
   * (`stampGrant`), read just before the write: the end the approver chose, by the clock every
   * replica's call start under it is judged by, never by the clock of the replica that took the click.
   * Once per `attempt` (STORE_CLOCK_SCRIPT keeps the first answer): a resend of the write (decide-call
   * sends it again after a failure) is not written again, and must log the end that was.
   */
  const withStoreStampedGrant = async (transition: StepTransition, attempt: string): Promise<StepTransition> => {
    const { step, grant } = transition;
    if (!grant) return transition;
    const stampKey = keys.ofChannel(step.teamId, step.channel).attempt(`grant-clock:${attempt}`);
    // Failing here, the write was never sent: decide-call then knows nothing was recorded.
    const clock = await run.csStoreClock(stampKey, clockArgument(), ATTEMPT_TTL_MS).catch(notSent);
    return stampGrant(transition, Number(clock));
  };

  /** COMMIT_STEP_SCRIPT's keys, then its arguments before the audit pairs. */
  const commitStepKeys = ({ step, fence }: StepTransition) => {
    const stepAt = keys.ofStep(step.stepId);
    const fencedThread = fence?.threadKey ?? step.threadKey;
    return [
      stepAt.step(step.stepId),
      stepAt.complete(),
      stepAt.schedule('expiry'),
      stepAt.schedule('reminder'),
      stepAt.audit(),
      keys.ofChannel(step.teamId, step.channel).grants(step.teamId, step.channel),
      keys.ofThread(fencedThread).fence(fencedThread),
      stepAt.openSteps(step.teamId),
      stepAt.grantChannels(step.teamId),
      stepAt.schedule('escalation'),
    ] as const;
  };
  const commitStepArguments = (transition: StepTransition) => {
    const { step, grant, fence } = transition;
    const flags = `${transition.completed ? 'c' : ''}${transition.resumed ? 'r' : ''}${transition.closed ? 'x' : ''}`;
    const expiry = transition.rescheduled?.expiry ? (step.expiresAt ?? '') : '';
    const reminder = transition.rescheduled?.reminder ? (step.remindAt ?? '') : '';
    const escalation = transition.rescheduled?.escalation ? (step.escalation?.nextAt ?? '') : '';
    const deadline = transition.deadline ?? '';
    return [
      transition.fromRevision,
      stepData(step),
      step.stepId,
      now(),
      flags,
      fence?.token ?? '',
      grant?.grantId ?? '',
      grant ? JSON.stringify(grant) : '',
      grant?.expiresAt ?? 0,
      auditMaxLength,
      step.phase,
      step.channel,
      expiry,
      reminder,
      escalation,
      deadline,
      deadline === '' ? '' : clockArgument(),
    ] as const;
  };

  return {
    async commitStep(judged, { attempt = randomUUID() } = {}) {
      const transition = await withStoreStampedGrant(judged, attempt);
      const { prepared, args } = prepare(transition.audit);
      const scriptKeys = [...commitStepKeys(transition), keys.ofStep(transition.step.stepId).attempt(attempt)];
      // Built once, as `commitStepAndQueue`'s: a resend carries the same attempt.
      const scriptArguments = [...commitStepArguments(transition), ATTEMPT_TTL_MS, ...args];
      // An approval goes straight to the primary (a lost one only leaves the call pending).
      const { reply, unconfirmed } = transition.withdraws
        ? await withdraw({ shard: keys.ofStep(transition.step.stepId).index, script: COMMIT_STEP_SCRIPT, keys: scriptKeys, args: scriptArguments }, () => run.csCommitStep(...scriptKeys, ...scriptArguments))
        : { reply: await run.csCommitStep(...scriptKeys, ...scriptArguments), unconfirmed: undefined };
      const result = reply as CommitResult;
      if (result !== 'committed') return { result };
      logStored(prepared);
      return unconfirmed ? { result, unconfirmed } : { result };
    },

    async commitStepAndQueue(judged, resume) {
      const { attempt = randomUUID() } = resume;
      const transition = await withStoreStampedGrant(judged, attempt);
      const { prepared, args } = prepare(transition.audit);
      const { threadKey } = transition.step;
      const at = keys.ofThread(threadKey);
      const scriptKeys = [...commitStepKeys(transition), at.queue(threadKey), at.lock(threadKey), at.busy(), at.inflight(threadKey), at.ready(), at.attempt(attempt)];
      // Built once: a resend (ioredis's after a lost reply, or the confirmed path's) carries the same attempt and nonce.
      const scriptArguments = [
        ...commitStepArguments(transition),
        resume.item,
        resume.lockTtlMs,
        QUEUE_TTL_MS,
        threadKey,
        FENCE_TTL_MS,
        resume.mode,
        READY_HINTS_KEPT,
        ATTEMPT_TTL_MS,
        newTokenNonce(),
        ...args,
      ];
      // A denial that completes the step waits for the replicas with its resume; an approval does not (see `commitStep`).
      const { reply, unconfirmed } = transition.withdraws
        ? await withdraw({ shard: keys.ofStep(transition.step.stepId).index, script: COMMIT_STEP_AND_QUEUE_SCRIPT, keys: scriptKeys, args: scriptArguments }, () => run.csCommitStepAndQueue(...scriptKeys, ...scriptArguments))
        : { reply: await run.csCommitStepAndQueue(...scriptKeys, ...scriptArguments), unconfirmed: undefined };
      const shortfall = unconfirmed ? { unconfirmed } : {};
      if (!Array.isArray(reply)) {
        if (reply !== 'committed') return { result: reply as CommitResult };
        logStored(prepared);
        return { result: 'committed', ...shortfall };
      }
      logStored(prepared);
      const [, token, item, leftover] = reply as [string, string, string, number];
      return { result: 'committed', claim: { token, item, ...(leftover === 1 ? { leftover: true as const } : {}) }, ...shortfall };
    },

    async commitStepWithThread({ transition, thread, ttlMs, settled = false, attempt }) {
      const { step, fence } = transition;
      // Only what a resume claim changes: the step itself, the complete-steps index and the audit stream.
      if (!fence || transition.grant || transition.completed || transition.closed || !transition.resumed) {
        throw new Error('commitStepWithThread writes resume claims only');
      }
      const { prepared, args } = prepare(transition.audit);
      const stepAt = keys.ofStep(step.stepId);
      const threadAt = keys.ofThread(thread.threadKey);
      const reply = await histories.write(thread, (write) =>
        run.csClaimStepWithThread(
          stepAt.step(step.stepId),
          stepAt.complete(),
          threadAt.thread(thread.threadKey),
          keys.ofThread(fence.threadKey).fence(fence.threadKey),
          threadAt.executing(thread.threadKey),
          threadAt.messages(thread.threadKey),
          // The step's shard, as COMMIT_STEP_SCRIPT appends; a step shares its thread's slot (`newStepId`).
          stepAt.audit(),
          threadAt.attempt(attempt ?? ''),
          transition.fromRevision,
          stepData(step),
          step.stepId,
          fence.token,
          step.phase,
          write.metaJson,
          ttlMs,
          settled ? '1' : '0',
          write.historyJson,
          auditMaxLength,
          attempt === undefined ? '' : ATTEMPT_TTL_MS,
          ...args,
        ),
      );
      // 'written': this named write ran before, its reply lost (`namedWrite`).
      if (typeof reply !== 'number' && reply !== 'written') return reply as CommitResult;
      logStored(prepared);
      return 'committed';
    },
  };
}
