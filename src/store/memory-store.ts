import { randomUUID } from 'node:crypto';
import type { Grant } from '../approvals/grant.js';
import type { PendingStep } from '../approvals/pending-step.js';
import type { DecideResult, StateStore } from './state-store.js';
import type { ThreadState } from './thread-state.js';

interface Expiring<T> {
  value: T;
  expiresAt: number;
}

/**
 * Single-process twin of the Redis store with the same semantics, for development without Redis and
 * for unit tests. State is lost on restart, which is why start-up warns when it is used.
 */
export function createMemoryStore({ now = Date.now }: { now?: () => number } = {}): StateStore {
  const seen = new Map<string, number>();
  const threads = new Map<string, Expiring<string>>();
  const steps = new Map<string, Expiring<PendingStep>>();
  const queues = new Map<string, string[]>();
  const locks = new Map<string, Expiring<string>>();
  const schedules = { expiry: new Map<string, number>(), reminder: new Map<string, number>() };
  const grants = new Map<string, Grant>();
  const inflight = new Map<string, string>();
  const busy = new Map<string, number>();
  const complete = new Map<string, number>();
  const executing = new Map<string, Set<string>>();

  const live = <T>(map: Map<string, Expiring<T>>, id: string): T | undefined => {
    const entry = map.get(id);
    if (!entry) return undefined;
    if (entry.expiresAt <= now()) {
      map.delete(id);
      return undefined;
    }
    return entry.value;
  };
  // Callers get copies, as they would from Redis, so nobody mutates stored state by accident.
  const copy = <T>(value: T): T => structuredClone(value);
  const lockHolder = (threadKey: string) => live(locks, threadKey);

  return {
    kind: 'memory',

    async claimOnce(keys, ttlMs) {
      const fresh = keys.every((id) => (seen.get(id) ?? 0) <= now());
      for (const id of keys) if ((seen.get(id) ?? 0) <= now()) seen.set(id, now() + ttlMs);
      return fresh;
    },

    async getThread(threadKey) {
      const json = live(threads, threadKey);
      return json === undefined ? undefined : (JSON.parse(json) as ThreadState);
    },

    async saveThread(thread, ttlMs) {
      threads.set(thread.threadKey, { value: JSON.stringify(thread), expiresAt: now() + ttlMs });
    },

    async createThreadIfAbsent(thread, ttlMs) {
      if (live(threads, thread.threadKey) !== undefined) return false;
      threads.set(thread.threadKey, { value: JSON.stringify(thread), expiresAt: now() + ttlMs });
      return true;
    },

    async createStep(step, ttlMs) {
      steps.set(step.stepId, { value: copy(step), expiresAt: now() + ttlMs });
      if (step.expiresAt !== undefined) schedules.expiry.set(step.stepId, step.expiresAt);
      if (step.remindAt !== undefined) schedules.reminder.set(step.stepId, step.remindAt);
    },

    async getStep(stepId) {
      const step = live(steps, stepId);
      return step && copy(step);
    },

    async setStepCard(stepId, cardTs) {
      const step = live(steps, stepId);
      if (step) step.cardTs = cardTs;
    },

    async decide({ stepId, approvalId, decision, required = 1 }): Promise<DecideResult> {
      const step = live(steps, stepId);
      if (!step || !step.calls.some((call) => call.approvalId === approvalId)) return { status: 'not-found' };
      const existing = step.decisions[approvalId];
      if (existing) return { status: 'already-decided', step: copy(step), decision: copy(existing) };
      if (step.phase !== 'pending') return { status: 'closed', step: copy(step) };
      if (decision.outcome === 'approved' && required > 1) {
        const partial = ((step.approvals ??= {})[approvalId] ??= []);
        if (partial.some((approval) => approval.userId === decision.userId)) return { status: 'already-approved-by-you', step: copy(step) };
        partial.push(copy(decision));
        if (partial.length < required) {
          step.revision += 1;
          return { status: 'partial', step: copy(step) };
        }
      }
      step.decisions[approvalId] = copy(decision);
      step.revision += 1;
      const completedStep = step.calls.every((call) => Object.hasOwn(step.decisions, call.approvalId));
      if (completedStep) {
        step.phase = 'complete';
        complete.set(stepId, decision.at);
      }
      return { status: 'recorded', step: copy(step), completedStep };
    },

    async claimResume(stepId) {
      complete.delete(stepId);
      const step = live(steps, stepId);
      if (step?.phase !== 'complete') return undefined;
      step.phase = 'resumed';
      return copy(step);
    },

    async supersede(stepId, decision) {
      const step = live(steps, stepId);
      if (step?.phase !== 'pending') return undefined;
      for (const call of step.calls) {
        if (!Object.hasOwn(step.decisions, call.approvalId)) step.decisions[call.approvalId] = copy(decision);
      }
      step.phase = 'superseded';
      step.revision += 1;
      return copy(step);
    },

    async dueSteps({ kind, now: at, limit }) {
      return [...schedules[kind]]
        .filter(([, due]) => due <= at)
        .sort(([, left], [, right]) => left - right)
        .slice(0, limit)
        .map(([stepId]) => stepId);
    },

    async expireStep(stepId, decision) {
      schedules.expiry.delete(stepId);
      const step = live(steps, stepId);
      if (step?.phase !== 'pending') return undefined;
      for (const call of step.calls) {
        if (!Object.hasOwn(step.decisions, call.approvalId)) step.decisions[call.approvalId] = copy(decision);
      }
      step.phase = 'complete';
      step.revision += 1;
      complete.set(stepId, decision.at);
      return copy(step);
    },

    async claimReminder(stepId) {
      return schedules.reminder.delete(stepId);
    },

    async listPendingSteps({ teamId, channel, limit }) {
      return [...steps.keys()]
        .map((stepId) => live(steps, stepId))
        .filter((step): step is PendingStep => step?.phase === 'pending' && step.teamId === teamId && step.channel === channel)
        .sort((left, right) => right.createdAt - left.createdAt)
        .slice(0, limit)
        .map(copy);
    },

    async saveGrant(grant) {
      grants.set(grant.grantId, copy(grant));
    },

    async listGrants({ teamId, channel, now: at }) {
      for (const [grantId, grant] of grants) if (grant.expiresAt <= at) grants.delete(grantId);
      return [...grants.values()]
        .filter((grant) => grant.teamId === teamId && grant.channel === channel)
        .sort((left, right) => left.createdAt - right.createdAt)
        .map(copy);
    },

    async revokeGrant({ teamId, channel, grantId }) {
      const grant = grants.get(grantId);
      if (!grant || grant.teamId !== teamId || grant.channel !== channel) return undefined;
      grants.delete(grantId);
      return copy(grant);
    },

    async enqueueWork(threadKey, item, lockTtlMs) {
      const queue = queues.get(threadKey) ?? [];
      queue.push(item);
      queues.set(threadKey, queue);
      busy.set(threadKey, now());
      if (lockHolder(threadKey) !== undefined) return undefined;
      const token = randomUUID();
      locks.set(threadKey, { value: token, expiresAt: now() + lockTtlMs });
      return token;
    },

    async takeWork(threadKey) {
      const item = queues.get(threadKey)?.shift();
      if (item !== undefined) inflight.set(threadKey, item);
      return item;
    },

    async finishWork(threadKey) {
      inflight.delete(threadKey);
    },

    async takeLeftover(threadKey) {
      return inflight.get(threadKey);
    },

    async busyThreads({ limit }) {
      return [...busy].sort(([, left], [, right]) => left - right).slice(0, limit).map(([threadKey]) => threadKey);
    },

    async tryLock(threadKey, ttlMs) {
      if (lockHolder(threadKey) !== undefined) return undefined;
      const token = randomUUID();
      locks.set(threadKey, { value: token, expiresAt: now() + ttlMs });
      return token;
    },

    async completedSteps({ before, limit }) {
      return [...complete].filter(([, at]) => at <= before).sort(([, left], [, right]) => left - right).slice(0, limit).map(([stepId]) => stepId);
    },

    async markExecuting(threadKey, toolCallId) {
      const calls = executing.get(threadKey) ?? new Set<string>();
      calls.add(toolCallId);
      executing.set(threadKey, calls);
    },

    async executingCalls(threadKey) {
      return new Set(executing.get(threadKey));
    },

    async extendLock(threadKey, token, ttlMs) {
      if (lockHolder(threadKey) !== token) return false;
      locks.set(threadKey, { value: token, expiresAt: now() + ttlMs });
      return true;
    },

    async releaseLockIfIdle(threadKey, token, lockTtlMs) {
      const holder = lockHolder(threadKey);
      if (holder !== undefined && holder !== token) return true;
      if ((queues.get(threadKey)?.length ?? 0) > 0 || inflight.has(threadKey)) {
        locks.set(threadKey, { value: token, expiresAt: now() + lockTtlMs });
        return false;
      }
      locks.delete(threadKey);
      busy.delete(threadKey);
      return true;
    },

    async ping() {},

    async close() {},
  };
}
