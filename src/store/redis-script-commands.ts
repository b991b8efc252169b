import { RECORD_CARD_COPY_SCRIPT, REPLACE_STEP_CARD_SCRIPT, SET_STEP_CARD_SCRIPT } from './redis-card-scripts.js';
import { CLAIM_ONCE_SCRIPT } from './redis-delivery-scripts.js';
import { FINISH_EXECUTING_SCRIPT, MARK_EXECUTING_SCRIPT, UNMARK_EXECUTING_SCRIPT } from './redis-executing-scripts.js';
import { LIST_GRANTS_SCRIPT, REVOKE_GRANT_SCRIPT, STORE_CLOCK_SCRIPT } from './redis-grant-scripts.js';
import { CLAIM_KEPT_SCRIPT, CLAIM_REMINDER_SCRIPT, FINISH_REMINDER_SCRIPT, KEEP_REMINDER_SCRIPT, RELEASE_REMINDER_SCRIPT } from './redis-schedule-scripts.js';
import { CLAIM_STEP_WITH_THREAD_SCRIPT, COMMIT_STEP_AND_QUEUE_SCRIPT, COMMIT_STEP_SCRIPT, CREATE_STEP_SCRIPT } from './redis-step-scripts.js';
import { CREATE_THREAD_IF_ABSENT_SCRIPT, READ_THREAD_SCRIPT, SAVE_THREAD_SCRIPT } from './redis-thread-scripts.js';
import {
  ENQUEUE_AND_LOCK_SCRIPT,
  EXTEND_LOCK_SCRIPT,
  FINISH_WORK_SCRIPT,
  HAND_BACK_WORK_SCRIPT,
  HAND_OFF_WORK_SCRIPT,
  LOCK_AND_TAKE_SCRIPT,
  RELEASE_IF_IDLE_SCRIPT,
  STALLED_THREADS_SCRIPT,
  TAKE_WORK_SCRIPT,
  TRY_LOCK_SCRIPT,
} from './redis-work-queue-scripts.js';

/** Every script the store runs, as an ioredis command: [number of keys, Lua]. */
export const SCRIPTS = {
  csCommitStep: [11, COMMIT_STEP_SCRIPT],
  csCommitStepAndQueue: [16, COMMIT_STEP_AND_QUEUE_SCRIPT],
  csCreateStep: [12, CREATE_STEP_SCRIPT],
  csSaveThread: [6, SAVE_THREAD_SCRIPT],
  csCreateThreadIfAbsent: [2, CREATE_THREAD_IF_ABSENT_SCRIPT],
  csReadThread: [2, READ_THREAD_SCRIPT],
  csMarkExecuting: [5, MARK_EXECUTING_SCRIPT],
  csFinishExecuting: [3, FINISH_EXECUTING_SCRIPT],
  csUnmarkExecuting: [3, UNMARK_EXECUTING_SCRIPT],
  csRevokeGrant: [2, REVOKE_GRANT_SCRIPT],
  csListGrants: [1, LIST_GRANTS_SCRIPT],
  csStoreClock: [1, STORE_CLOCK_SCRIPT],
  csEnqueueAndLock: [6, ENQUEUE_AND_LOCK_SCRIPT],
  csClaimStepWithThread: [8, CLAIM_STEP_WITH_THREAD_SCRIPT],
  csHandOffWork: [5, HAND_OFF_WORK_SCRIPT],
  csTryLock: [2, TRY_LOCK_SCRIPT],
  csLockAndTake: [6, LOCK_AND_TAKE_SCRIPT],
  csExtendLock: [2, EXTEND_LOCK_SCRIPT],
  csTakeWork: [3, TAKE_WORK_SCRIPT],
  csFinishWork: [5, FINISH_WORK_SCRIPT],
  csReleaseIfIdle: [5, RELEASE_IF_IDLE_SCRIPT],
  csHandBackWork: [6, HAND_BACK_WORK_SCRIPT],
  csStalledThreads: [1, STALLED_THREADS_SCRIPT],
  csRecordCardCopy: [1, RECORD_CARD_COPY_SCRIPT],
  csSetStepCard: [1, SET_STEP_CARD_SCRIPT],
  csReplaceStepCard: [1, REPLACE_STEP_CARD_SCRIPT],
  csClaimOnce: [1, CLAIM_ONCE_SCRIPT],
  csClaimKept: [1, CLAIM_KEPT_SCRIPT],
  csClaimReminder: [2, CLAIM_REMINDER_SCRIPT],
  csKeepReminder: [1, KEEP_REMINDER_SCRIPT],
  csReleaseReminder: [1, RELEASE_REMINDER_SCRIPT],
  csFinishReminder: [2, FINISH_REMINDER_SCRIPT],
} as const;

export type ScriptRunner = Record<keyof typeof SCRIPTS, (...args: Array<string | number>) => Promise<unknown>>;
