import type { Grant } from '../approvals/grant.js';
import type { Decision, PendingStep } from '../approvals/pending-step.js';
import type { ThreadState } from './thread-state.js';

export type DecideResult =
  | { status: 'recorded'; step: PendingStep; completedStep: boolean }
  /** An approval counted towards a quorum that is not reached yet. */
  | { status: 'partial'; step: PendingStep }
  | { status: 'already-approved-by-you'; step: PendingStep }
  | { status: 'already-decided'; step: PendingStep; decision: Decision }
  | { status: 'closed'; step: PendingStep }
  | { status: 'not-found' };

/**
 * The narrow state interface the bot needs. Redis and memory implement it with the same semantics;
 * every method that changes shared state is atomic so any bot process can call it concurrently.
 */
export interface StateStore {
  readonly kind: 'redis' | 'memory';

  /** Marks every key as seen; true only when none of them was seen before (first delivery). */
  claimOnce(keys: string[], ttlMs: number): Promise<boolean>;

  getThread(threadKey: string): Promise<ThreadState | undefined>;
  saveThread(thread: ThreadState, ttlMs: number): Promise<void>;
  /** Starts following a thread unless it already is; never overwrites an existing history. */
  createThreadIfAbsent(thread: ThreadState, ttlMs: number): Promise<boolean>;

  createStep(step: PendingStep, ttlMs: number): Promise<void>;
  getStep(stepId: string): Promise<PendingStep | undefined>;
  setStepCard(stepId: string, cardTs: string): Promise<void>;
  /**
   * Records the first decision for a call; the decision that completes the step reports it once.
   * With `required` > 1 an approval counts towards a quorum of distinct users until it is reached.
   */
  decide(options: { stepId: string; approvalId: string; decision: Decision; required?: number }): Promise<DecideResult>;
  /** Steps whose expiry (or reminder) time has come, oldest first. */
  dueSteps(options: { kind: 'expiry' | 'reminder'; now: number; limit: number }): Promise<string[]>;
  /** Closes a pending step's undecided calls with `decision` (expired); undefined when it was not pending. */
  expireStep(stepId: string, decision: Decision): Promise<PendingStep | undefined>;
  /** Takes a due reminder off the schedule; true for exactly one caller. */
  claimReminder(stepId: string): Promise<boolean>;
  /** Moves a complete step to `resumed`; only one caller ever gets the step back. */
  claimResume(stepId: string): Promise<PendingStep | undefined>;
  /** Closes a pending step's undecided calls with `decision`; undefined when it was not pending. */
  supersede(stepId: string, decision: Decision): Promise<PendingStep | undefined>;

  /** Open steps of a channel, newest first (for `/countersign pending`); closed ones are dropped. */
  listPendingSteps(options: { teamId: string; channel: string; limit: number }): Promise<PendingStep[]>;

  saveGrant(grant: Grant): Promise<void>;
  /** Live grants of a channel; expired ones are removed as a side effect. */
  listGrants(options: { teamId: string; channel: string; now: number }): Promise<Grant[]>;
  revokeGrant(options: { teamId: string; channel: string; grantId: string }): Promise<Grant | undefined>;

  /**
   * Appends work for a thread and tries to take the thread's lock in the same atomic operation.
   * Returns the lock token when this caller must drain the queue, undefined when another holder will.
   */
  enqueueWork(threadKey: string, item: string, lockTtlMs: number): Promise<string | undefined>;
  /**
   * Takes the next item and keeps it as the thread's in-flight item until `finishWork`, so a
   * process that dies while handling it leaves it for the next holder (`takeLeftover`).
   */
  takeWork(threadKey: string): Promise<string | undefined>;
  finishWork(threadKey: string): Promise<void>;
  /** The in-flight item a dead holder left behind, if any (it stays in flight until finished). */
  takeLeftover(threadKey: string): Promise<string | undefined>;
  /** Threads with queued or in-flight work, oldest first: where a dead process may have left work. */
  busyThreads(options: { limit: number }): Promise<string[]>;
  /** Takes a thread's lock if nobody holds it (to pick up work a dead process left). */
  tryLock(threadKey: string, ttlMs: number): Promise<string | undefined>;
  /** Steps every call of which is decided but that no process has resumed, completed before `before`. */
  completedSteps(options: { before: number; limit: number }): Promise<string[]>;
  /** Written just before a tool runs: after a crash, a call with a marker and no result may have run. */
  markExecuting(threadKey: string, toolCallId: string, ttlMs: number): Promise<void>;
  executingCalls(threadKey: string): Promise<Set<string>>;
  extendLock(threadKey: string, token: string, ttlMs: number): Promise<boolean>;
  /**
   * Releases the lock only when the queue is empty, atomically, so work enqueued while the holder
   * was finishing is never stranded. False means: more work arrived, keep draining.
   */
  releaseLockIfIdle(threadKey: string, token: string, lockTtlMs: number): Promise<boolean>;

  /** Throws when the backing store cannot be reached. */
  ping(): Promise<void>;
  close(): Promise<void>;
}
