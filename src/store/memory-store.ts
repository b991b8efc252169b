import { randomUUID } from 'node:crypto';
import type { AuditEventInput } from '../audit/audit-event.js';
import type { AuditLog } from '../audit/audit-log.js';
import type { Grant } from '../approvals/grant.js';
import { PENDING_STEP_SCHEMA_VERSION, type PendingStep } from '../approvals/pending-step.js';
import { stampGrant } from '../approvals/transitions/stamp-grant.js';
import type { StepTransition } from '../approvals/transitions/step-transition.js';
import { FencedError } from './fenced-error.js';
import { newTokenNonce, nextFencingToken } from './fencing-token.js';
import { NEWER_SCHEMA, refuseNewerSchema, unlessNewerSchema } from './newer-schema-error.js';
import type { CommitResult, ExecutingMarker, Fence, FenceState, PendingCardRefresh, PendingTakeBack, ScheduleKind, StateStore, WorkClaim } from './state-store.js';
import { takeBackRecord } from './take-back-record.js';
import { cardRefreshRecord } from './card-refresh-record.js';
import { createMemoryKeptSchedule } from './memory-kept-schedule.js';
import { keptScheduleMethods } from './kept-schedule.js';
import { THREAD_STATE_SCHEMA_VERSION, type ThreadState } from './thread-state.js';

/** How long a write's attempt is remembered, as the Redis store keeps it for a resend. */
const ATTEMPT_TTL_MS = 5 * 60 * 1000;

interface Expiring<T> {
  value: T;
  expiresAt: number;
}

export interface MemoryStoreOptions {
  now?: () => number;
  /** Receives the audit events written with state changes, as the Redis store appends them to its stream. */
  audit?: Pick<AuditLog, 'append'>;
}

/**
 * Single-process twin of the Redis store with the same semantics, for development without Redis and
 * for unit tests. State is lost on restart, which is why start-up warns when it is used. Every
 * method does its whole change before its first `await`, so, like a Lua script, it is atomic.
 */
export function createMemoryStore({ now = Date.now, audit }: MemoryStoreOptions = {}): StateStore {
  const seen = new Map<string, { claimant: string; expiresAt: number }>();
  const deletedPosts = new Map<string, Expiring<true>>();
  const threads = new Map<string, Expiring<string>>();
  const steps = new Map<string, Expiring<PendingStep>>();
  const queues = new Map<string, string[]>();
  const locks = new Map<string, Expiring<string>>();
  const fences = new Map<string, string>();
  const schedules: Record<ScheduleKind, Map<string, number>> = { expiry: new Map(), reminder: new Map(), escalation: new Map() };
  /** Who is sending a step's due reminder (`claimReminder`), until its lease runs out. */
  const reminderClaims = new Map<string, Expiring<{ claimant: string; dueAt: number }>>();
  const grants = new Map<string, Grant>();
  const inflight = new Map<string, string>();
  const busy = new Map<string, number>();
  /** Threads handed off to the workers, and workers waiting for one. */
  const ready: string[] = [];
  const readyWaiters: Array<(threadKey: string) => void> = [];
  const complete = new Map<string, number>();
  /** Take-backs and card refreshes to try again, by their record. */
  const takeBacks = createMemoryKeptSchedule<PendingTakeBack>({ record: takeBackRecord });
  const cardRefreshes = createMemoryKeptSchedule<PendingCardRefresh>({ record: cardRefreshRecord });
  const executing = new Map<string, Map<string, ExecutingMarker>>();
  /**
   * What a step commit or a write that may take a thread's lock did (the lock's token, or ''), by
   * its attempt (see `commitStepAndQueue`); a named save that ran ('', see `NamedWrite`).
   */
  const attempts = new Map<string, Expiring<string>>();

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
  // Read as the Redis store reads them: what a newer release stored throws `NewerSchemaError`.
  const readStep = (step: PendingStep | undefined): PendingStep | undefined => {
    if (step) refuseNewerSchema({ kind: 'step', id: step.stepId, schemaVersion: step.schemaVersion, readable: PENDING_STEP_SCHEMA_VERSION });
    return step && copy(step);
  };
  const readThread = (threadKey: string): ThreadState | undefined => {
    const json = live(threads, threadKey);
    const thread = json === undefined ? undefined : (JSON.parse(json) as ThreadState);
    if (thread) refuseNewerSchema({ kind: 'thread', id: threadKey, schemaVersion: thread.schemaVersion, readable: THREAD_STATE_SCHEMA_VERSION });
    return thread;
  };
  /** Open steps by `matches`, newest first: one a newer release stored is skipped (it stays stored and open). */
  const openSteps = (matches: (step: PendingStep) => boolean, limit: number): PendingStep[] =>
    [...steps.keys()]
      .map((stepId) => unlessNewerSchema(() => readStep(live(steps, stepId))))
      .filter((step): step is PendingStep => step !== NEWER_SCHEMA && step?.phase === 'pending' && matches(step))
      .sort((left, right) => right.createdAt - left.createdAt)
      .slice(0, limit);
  const lockHolder = (threadKey: string) => live(locks, threadKey);
  const current = (fence: Fence) => fences.get(fence.threadKey) === fence.token;
  // Memory loses nothing while it runs: a token is missing only for a thread never locked here.
  const fenceState = (fence: Fence): FenceState => {
    const newest = fences.get(fence.threadKey);
    return newest === undefined ? 'missing' : newest === fence.token ? 'current' : 'taken';
  };
  const guard = (fence: Fence) => {
    if (!current(fence)) throw new FencedError(fence.threadKey);
  };
  const record = (events: readonly AuditEventInput[]) => {
    for (const event of events) void audit?.append(event);
  };
  const issueToken = (threadKey: string, ttlMs: number): string => {
    const token = nextFencingToken({ last: fences.get(threadKey), now: now(), nonce: newTokenNonce() });
    fences.set(threadKey, token);
    locks.set(threadKey, { value: token, expiresAt: now() + ttlMs });
    return token;
  };
  /**
   * An attempt's write again: its claim while the lock it took still holds its token, else none.
   * Its item counts as left over unless it is the write's own (`own`), as the scripts answer.
   */
  const claimOf = (threadKey: string, taken: string, own: string): WorkClaim | undefined => {
    const item = inflight.get(threadKey);
    if (taken === '' || lockHolder(threadKey) !== taken || item === undefined) return undefined;
    return { token: taken, item, ...(item === own ? {} : { leftover: true as const }) };
  };
  const remember = (attempt: string, taken: string, ttlMs = ATTEMPT_TTL_MS) => {
    // Mostly kept equally long, so the oldest come first: the lapsed ones are dropped from the
    // front (one kept longer, a finish's, only holds back the dropping; `live` reads them as gone).
    for (const [old, { expiresAt }] of attempts) {
      if (expiresAt > now()) break;
      attempts.delete(old);
    }
    attempts.set(attempt, { value: taken, expiresAt: now() + ttlMs });
  };
  /** Whether the write this attempt names already ran (`NamedWrite`). */
  const ranBefore = (attempt: string | undefined) => attempt !== undefined && live(attempts, attempt) !== undefined;
  /** Offers a thread to the workers: to one waiting in `nextReadyThreads`, else on the ready list. */
  const offer = (threadKey: string) => {
    const waiter = readyWaiters.shift();
    if (waiter) waiter(threadKey);
    else ready.push(threadKey);
  };
  /** As HAND_BACK_WORK_SCRIPT (the fence checked): the lock released, work left in place and offered. */
  const handBackThread = (threadKey: string) => {
    locks.delete(threadKey);
    if ((queues.get(threadKey)?.length ?? 0) > 0 || inflight.has(threadKey)) offer(threadKey);
    else busy.delete(threadKey);
  };
  /** The thread's in-flight item, else the next queued one moved in flight. */
  const takeItem = (threadKey: string): string | undefined => {
    const item = inflight.get(threadKey) ?? queues.get(threadKey)?.shift();
    if (item !== undefined) inflight.set(threadKey, item);
    return item;
  };
  /** `takeItem` for a caller that just took the lock: `leftover` when the item was in flight already (`WorkClaim.leftover`). */
  const takeWithLock = (threadKey: string): { item?: string; leftover?: true } => {
    const leftover = inflight.has(threadKey);
    const item = takeItem(threadKey);
    return item === undefined ? {} : { item, ...(leftover ? { leftover: true as const } : {}) };
  };
  /**
   * As LIST_GRANTS_SCRIPT: only this store's clock judges and removes a grant (its `grant-created`
   * record says that end); the reader's (`hideEndedBy`, the turn's own lookup only) just leaves out
   * one it thinks over, so a reader whose clock runs fast fails closed for itself without taking a
   * live grant from every replica.
   */
  const liveGrants = (hideEndedBy?: number): Grant[] => {
    const storeNow = now();
    for (const [grantId, grant] of grants) if (grant.expiresAt <= storeNow) grants.delete(grantId);
    return [...grants.values()].filter((grant) => hideEndedBy === undefined || grant.expiresAt > hideEndedBy);
  };

  /** As applyHistoryWrite: while a request waits in the thread, a save never shortens the life its step gave it (`stepRecordTtlMs`). */
  const writeThread = (thread: ThreadState, ttlMs: number, settled: boolean) => {
    const kept = thread.pendingStepId === undefined ? 0 : (threads.get(thread.threadKey)?.expiresAt ?? 0);
    threads.set(thread.threadKey, { value: JSON.stringify(thread), expiresAt: Math.max(kept, now() + ttlMs) });
    if (settled) executing.delete(thread.threadKey);
  };

  /** COMMIT_STEP_SCRIPT's write: the transition if the step is still at its revision (and the fence current). */
  const writeStep = (transition: StepTransition): CommitResult => {
    const entry = steps.get(transition.step.stepId);
    const stored = live(steps, transition.step.stepId);
    if (!entry || !stored) return 'not-found';
    if (transition.fence && !current(transition.fence)) return 'fenced';
    if (stored.revision !== transition.fromRevision) return 'conflict';
    // One process, one clock: this store's judges the deadline, as Redis's `TIME` does for the Redis store.
    if (transition.deadline !== undefined && now() >= transition.deadline) return 'expired';
    // The card's ts, link and copies live outside the revision: a transition never overwrites them.
    const { cardTs: _cardTs, cardLink: _cardLink, copies: _copies, ...next } = copy(transition.step);
    const { cardTs, cardLink, copies } = stored;
    entry.value = {
      ...next,
      revision: transition.fromRevision + 1,
      ...(cardTs === undefined ? {} : { cardTs }),
      ...(cardLink === undefined ? {} : { cardLink }),
      ...(copies === undefined ? {} : { copies }),
    };
    const { stepId } = transition.step;
    if (transition.completed) complete.set(stepId, now());
    if (transition.resumed) complete.delete(stepId);
    const { expiresAt, remindAt } = transition.step;
    if (transition.rescheduled?.expiry && expiresAt !== undefined) schedules.expiry.set(stepId, expiresAt);
    if (transition.rescheduled?.reminder && remindAt !== undefined) schedules.reminder.set(stepId, remindAt);
    const hopAt = transition.step.escalation?.nextAt;
    if (transition.rescheduled?.escalation && hopAt !== undefined) schedules.escalation.set(stepId, hopAt);
    if (transition.closed) {
      schedules.expiry.delete(stepId);
      schedules.reminder.delete(stepId);
    }
    // The grant's end by this store's clock, as the Redis store stamps it by `TIME`, not the replica's.
    const stamped = stampGrant(transition, now());
    if (stamped.grant) grants.set(stamped.grant.grantId, copy(stamped.grant));
    record(stamped.audit);
    return 'committed';
  };

  const store: StateStore = {
    kind: 'memory',

    async claimOnce(keys, ttlMs, { claimant = randomUUID() } = {}) {
      const claimed = keys.map((id) => {
        const holder = seen.get(id);
        if (holder === undefined || holder.expiresAt <= now()) {
          seen.set(id, { claimant, expiresAt: now() + ttlMs });
          return true;
        }
        return holder.claimant === claimant;
      });
      return claimed.every(Boolean);
    },

    async markDeleted({ channel, ts }, ttlMs) {
      deletedPosts.set(`${channel}:${ts}`, { value: true, expiresAt: now() + ttlMs });
    },

    async wasDeleted({ channel, ts }) {
      return live(deletedPosts, `${channel}:${ts}`) === true;
    },

    async getThread(threadKey) {
      return readThread(threadKey);
    },

    async getThreadAndDeletion(threadKey, post) {
      return { thread: await store.getThread(threadKey), deleted: await store.wasDeleted(post) };
    },

    async saveThread(thread, ttlMs, fence, { settled = false, audit: events = [], attempt } = {}) {
      if (ranBefore(attempt)) return;
      guard(fence);
      writeThread(thread, ttlMs, settled);
      record(events);
      if (attempt) remember(attempt, '');
    },

    async createThreadIfAbsent(thread, ttlMs) {
      if (live(threads, thread.threadKey) !== undefined) return false;
      threads.set(thread.threadKey, { value: JSON.stringify(thread), expiresAt: now() + ttlMs });
      return true;
    },

    async createStep({ step, thread, ttlMs, audit: events, fence, attempt }) {
      if (ranBefore(attempt)) return;
      guard(fence);
      steps.set(step.stepId, { value: copy({ ...step, revision: 0 }), expiresAt: now() + ttlMs });
      if (step.expiresAt !== undefined) schedules.expiry.set(step.stepId, step.expiresAt);
      if (step.remindAt !== undefined) schedules.reminder.set(step.stepId, step.remindAt);
      if (step.escalation?.nextAt !== undefined) schedules.escalation.set(step.stepId, step.escalation.nextAt);
      writeThread(thread, ttlMs, false);
      record(events);
      if (attempt) remember(attempt, '');
    },

    async getStep(stepId) {
      return readStep(live(steps, stepId));
    },

    async getStepAndThread(stepId, threadKey) {
      return { step: readStep(live(steps, stepId)), thread: readThread(threadKey) };
    },

    async setStepCard(stepId, cardTs, link) {
      const step = live(steps, stepId);
      if (!step) return undefined;
      if (step.cardTs === undefined) {
        step.cardTs = cardTs;
        if (link !== undefined) step.cardLink = link;
      }
      return { revision: step.revision, cardTs: step.cardTs };
    },

    async replaceStepCard(stepId, { from, to, link }) {
      const step = live(steps, stepId);
      // `to` on record already is a success, as in REPLACE_STEP_CARD_SCRIPT.
      if (!step || (step.cardTs !== from && step.cardTs !== to)) return false;
      step.cardTs = to;
      if (link === undefined) delete step.cardLink;
      else step.cardLink = link;
      return true;
    },

    async recordCardCopy(stepId, cardCopy) {
      const step = live(steps, stepId);
      if (!step) return undefined;
      // One copy per channel, the first recorded (as RECORD_CARD_COPY_SCRIPT), kept in channel order as the Redis hash fields are read.
      const recorded = (step.copies ?? []).find((existing) => existing.channel === cardCopy.channel);
      if (recorded) return copy(recorded);
      step.copies = [...(step.copies ?? []), copy(cardCopy)].sort((left, right) => (left.channel < right.channel ? -1 : 1));
      return copy(cardCopy);
    },

    async commitStep(transition, { attempt = randomUUID() } = {}) {
      // Sent again after its reply was lost (the Redis store's resend), the write finds itself.
      if (ranBefore(attempt)) return { result: 'committed' };
      const result = writeStep(transition);
      if (result === 'committed') remember(attempt, '');
      return { result };
    },

    async commitStepAndQueue(transition, resume) {
      const { attempt = randomUUID() } = resume;
      const { threadKey } = transition.step;
      const earlier = live(attempts, attempt);
      if (earlier !== undefined) {
        const claim = claimOf(threadKey, earlier, resume.item);
        return claim ? { result: 'committed', claim } : { result: 'committed' };
      }
      const result = writeStep(transition);
      if (result !== 'committed') return { result };
      if (!transition.completed || resume.mode === 'hand-off') {
        remember(attempt, '');
        if (transition.completed) await store.handOffWork(threadKey, resume.item);
        return { result };
      }
      const claim = await store.enqueueWork(threadKey, resume.item, resume.lockTtlMs, { attempt });
      return claim ? { result, claim } : { result };
    },

    async commitStepWithThread({ transition, thread, ttlMs, settled = false, attempt }) {
      if (!transition.fence || transition.grant || transition.completed || transition.closed || !transition.resumed) {
        throw new Error('commitStepWithThread writes resume claims only');
      }
      if (ranBefore(attempt)) return 'committed';
      // Every check before any write, as the Redis script does: both are written or neither.
      const stored = live(steps, transition.step.stepId);
      if (!stored) return 'not-found';
      if (!current(transition.fence)) return 'fenced';
      if (stored.revision !== transition.fromRevision) return 'conflict';
      const result = writeStep(transition);
      // As CLAIM_STEP_WITH_THREAD_SCRIPT: resumed, the step is kept no longer than its thread.
      const entry = steps.get(transition.step.stepId);
      if (entry) entry.expiresAt = Math.min(entry.expiresAt, now() + ttlMs);
      writeThread(thread, ttlMs, settled);
      if (attempt) remember(attempt, '');
      return result;
    },

    async dueSteps({ kind, now: at, limit }) {
      return [...schedules[kind]]
        .filter(([, due]) => due <= at)
        .sort(([, left], [, right]) => left - right)
        .slice(0, limit)
        .map(([stepId]) => stepId);
    },

    async unschedule(stepId) {
      for (const schedule of Object.values(schedules)) schedule.delete(stepId);
    },

    async scheduleEscalation(stepId, at) {
      if (at === undefined) schedules.escalation.delete(stepId);
      else schedules.escalation.set(stepId, at);
    },

    async postponeDue({ kind, stepId, until }) {
      const due = schedules[kind].get(stepId);
      if (due !== undefined && due < until) schedules[kind].set(stepId, until);
    },

    async claimReminder({ stepId, now: at, until, leaseMs, claimant = randomUUID() }) {
      const holder = live(reminderClaims, stepId);
      // Its own claim again: a resend after a lost reply, as the Redis store sees one.
      if (holder) return holder.claimant === claimant ? { dueAt: holder.dueAt, until, claimant } : undefined;
      const dueAt = schedules.reminder.get(stepId);
      if (dueAt === undefined || dueAt > at) return undefined;
      schedules.reminder.set(stepId, until);
      reminderClaims.set(stepId, { value: { claimant, dueAt }, expiresAt: now() + leaseMs });
      return { dueAt, until, claimant };
    },

    async keepReminder(stepId, claim, leaseMs) {
      if (live(reminderClaims, stepId)?.claimant !== claim.claimant) return false;
      reminderClaims.get(stepId)!.expiresAt = now() + leaseMs;
      return true;
    },

    async releaseReminder(stepId, claim) {
      if (live(reminderClaims, stepId)?.claimant === claim.claimant) reminderClaims.delete(stepId);
    },

    async finishReminder(stepId, claim) {
      if (schedules.reminder.get(stepId) === claim.until) schedules.reminder.delete(stepId);
      if (live(reminderClaims, stepId)?.claimant === claim.claimant) reminderClaims.delete(stepId);
    },

    ...keptScheduleMethods({ takeBacks, cardRefreshes }),

    async completedSteps({ before, limit }) {
      return [...complete].filter(([, at]) => at <= before).sort(([, left], [, right]) => left - right).slice(0, limit).map(([stepId]) => stepId);
    },

    async postponeCompleted({ stepId, until }) {
      const at = complete.get(stepId);
      if (at !== undefined && at < until) complete.set(stepId, until);
    },

    async listPendingSteps({ teamId, channel, limit }) {
      return openSteps((step) => step.teamId === teamId && step.channel === channel, limit);
    },

    async listOpenSteps({ teamId, limit }) {
      return openSteps((step) => step.teamId === teamId, limit);
    },

    async teamsWithOpenSteps() {
      return [...new Set([...steps.values()].map((entry) => entry.value.teamId))];
    },

    async listTeamGrants({ teamId }) {
      return liveGrants().filter((grant) => grant.teamId === teamId).sort((left, right) => left.createdAt - right.createdAt).map(copy);
    },

    async listGrants({ teamId, channel, hideEndedBy }) {
      return liveGrants(hideEndedBy)
        .filter((grant) => grant.teamId === teamId && grant.channel === channel)
        .sort((left, right) => left.createdAt - right.createdAt)
        .map(copy);
    },

    async revokeGrant({ teamId, channel, grantId, audit: auditFor }) {
      const grant = grants.get(grantId);
      if (!grant || grant.teamId !== teamId || grant.channel !== channel) return undefined;
      grants.delete(grantId);
      record([auditFor(copy(grant))]);
      return { grant: copy(grant) };
    },

    async enqueueWork(threadKey, item, lockTtlMs, { attempt = randomUUID() } = {}) {
      const earlier = live(attempts, attempt);
      if (earlier !== undefined) return claimOf(threadKey, earlier, item);
      const queue = queues.get(threadKey) ?? [];
      queue.push(item);
      queues.set(threadKey, queue);
      busy.set(threadKey, now());
      if (lockHolder(threadKey) !== undefined) {
        remember(attempt, '');
        return undefined;
      }
      const token = issueToken(threadKey, lockTtlMs);
      remember(attempt, token);
      return { token, ...(takeWithLock(threadKey) as { item: string; leftover?: true }) };
    },

    async handOffWork(threadKey, item, { attempt = randomUUID() } = {}) {
      if (ranBefore(attempt)) return;
      remember(attempt, '');
      const queue = queues.get(threadKey) ?? [];
      queue.push(item);
      queues.set(threadKey, queue);
      busy.set(threadKey, now());
      if (lockHolder(threadKey) !== undefined) return;
      offer(threadKey);
    },

    async nextReadyThreads({ timeoutMs, max, signal }) {
      if (ready.length > 0) return ready.splice(0, Math.max(1, max));
      if (signal?.aborted) return [];
      return new Promise<string[]>((resolve) => {
        const giveUp = () => {
          clearTimeout(timer);
          signal?.removeEventListener('abort', giveUp);
          const index = readyWaiters.indexOf(waiter);
          if (index !== -1) readyWaiters.splice(index, 1);
          resolve([]);
        };
        const timer = setTimeout(giveUp, timeoutMs);
        timer.unref();
        const waiter = (threadKey: string) => {
          clearTimeout(timer);
          signal?.removeEventListener('abort', giveUp);
          resolve([threadKey]);
        };
        readyWaiters.push(waiter);
        signal?.addEventListener('abort', giveUp, { once: true });
      });
    },

    async returnReadyThreads(threadKeys) {
      const left: string[] = [];
      for (const threadKey of threadKeys) {
        const waiter = readyWaiters.shift();
        if (waiter) waiter(threadKey);
        else left.push(threadKey);
      }
      ready.unshift(...left);
    },

    async tryLock(threadKey, ttlMs) {
      if (lockHolder(threadKey) !== undefined) return undefined;
      return issueToken(threadKey, ttlMs);
    },

    async lockAndTake(threadKey, ttlMs) {
      if (lockHolder(threadKey) !== undefined) return undefined;
      const token = issueToken(threadKey, ttlMs);
      return { token, ...takeWithLock(threadKey) };
    },

    async takeWork(fence) {
      guard(fence);
      return takeItem(fence.threadKey);
    },

    async takeLeftover(threadKey) {
      return inflight.get(threadKey);
    },

    async finishWork(fence, finished, lockTtlMs, closing, { attempt, handBack = false } = {}) {
      const named = closing !== undefined && ranBefore(attempt);
      // Its save ran with this finish before: the item is finished, the thread another's now.
      if (named && !current(fence)) return undefined;
      guard(fence);
      if (closing && !named) {
        writeThread(closing.thread, closing.ttlMs, closing.settled ?? false);
        if (attempt) remember(attempt, '', Math.max(ATTEMPT_TTL_MS, lockTtlMs));
      }
      if (inflight.get(fence.threadKey) === finished) inflight.delete(fence.threadKey);
      if (handBack) {
        handBackThread(fence.threadKey);
        return undefined;
      }
      const next = inflight.get(fence.threadKey) ?? queues.get(fence.threadKey)?.shift();
      if (next !== undefined) inflight.set(fence.threadKey, next);
      if (next !== undefined) {
        locks.set(fence.threadKey, { value: fence.token, expiresAt: now() + lockTtlMs });
        return next;
      }
      locks.delete(fence.threadKey);
      busy.delete(fence.threadKey);
      return undefined;
    },

    async busyThreads({ limit, before = Number.POSITIVE_INFINITY }) {
      return [...busy].filter(([, at]) => at <= before).sort(([, left], [, right]) => left - right).slice(0, limit).map(([threadKey]) => threadKey);
    },

    async stalledThreads({ limit, before }) {
      const stalled = [...busy].filter(([threadKey, at]) => at <= before && lockHolder(threadKey) === undefined);
      return stalled.sort(([, left], [, right]) => left - right).slice(0, limit).map(([threadKey]) => threadKey);
    },

    async extendLock(fence, ttlMs) {
      const state = fenceState(fence);
      if (state === 'current') locks.set(fence.threadKey, { value: fence.token, expiresAt: now() + ttlMs });
      return state;
    },

    async fenceState(fence) {
      return fenceState(fence);
    },

    async releaseLockIfIdle(fence, lockTtlMs, { handBack = false } = {}) {
      if (!current(fence)) return 'fenced';
      if (handBack) {
        handBackThread(fence.threadKey);
        return 'released';
      }
      if ((queues.get(fence.threadKey)?.length ?? 0) > 0 || inflight.has(fence.threadKey)) {
        locks.set(fence.threadKey, { value: fence.token, expiresAt: now() + lockTtlMs });
        return 'more';
      }
      locks.delete(fence.threadKey);
      busy.delete(fence.threadKey);
      return 'released';
    },

    async markExecuting({ fence, toolCallId, marker, audit: event, grant: location }) {
      guard(fence);
      if (location) {
        const grant = grants.get(location.grantId);
        if (!grant || grant.teamId !== location.teamId || grant.channel !== location.channel || grant.expiresAt <= now()) return 'grant-gone';
      }
      const markers = executing.get(fence.threadKey) ?? new Map<string, ExecutingMarker>();
      markers.set(toolCallId, copy(marker));
      executing.set(fence.threadKey, markers);
      record(event);
      return 'marked';
    },

    async finishExecuting({ threadKey, toolCallId, marker, audit: event }) {
      executing.get(threadKey)?.set(toolCallId, copy(marker));
      record([event]);
    },

    async executingCalls(threadKey) {
      return new Map([...(executing.get(threadKey) ?? new Map<string, ExecutingMarker>())].map(([id, marker]) => [id, copy(marker)]));
    },

    async ping() {},

    async risks() {
      return [];
    },

    async close() {},
  };
  return store;
}
