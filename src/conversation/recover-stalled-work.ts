import type { Logger } from 'pino';
import { NEWER_RELEASE_RETRY_MS } from '../approvals/expiry-sweeper.js';
import { NEWER_SCHEMA, newerSchemaOrThrow } from '../store/newer-schema-error.js';
import type { StateStore } from '../store/state-store.js';
import type { ThreadWorker } from './thread-worker.js';

/** Work looked at per sweep, so one sweep stays short. */
const BATCH = 20;
/**
 * Threads with work read to tell a decided step nobody resumed from one whose resume still waits
 * its turn. With more than this many busy, the sweep cannot tell them apart and resumes none.
 */
const BUSY_THREADS_READ = 1_000;

/**
 * Work a dead process left behind, found from the store rather than from memory, so any replica
 * (or the restarted process) finishes it: threads with queued or in-flight items whose lock has
 * lapsed are drained, and steps that were fully decided but never resumed are resumed. Claims in
 * the store keep each of these to one process.
 *
 * Only work that has waited longer than `graceMs` is stalled: a thread just handed off is a worker's
 * with room to take from the ready list, and one taken here would hold its lock behind this
 * process's turns. So threads are taken only while this process has room (`ThreadWorker.room`), and
 * none once `stopping` is aborted (a worker told to stop starts no new thread).
 *
 * A decided step whose step or thread a newer release stored (a rolling deploy, a rollback) is
 * left to that release: its resume here would only end unrun (`leaveItemToNewerRelease`) and the
 * step stay decided, to be resubmitted by every sweep of every replica. It is put off instead
 * (`postponeCompleted`), out of the way of the batch, and looked at again a little later, when the
 * newer release's sweeps resume it (or nearly: they find it first unless this one swept just
 * before). `reported`, kept across one process's sweeps: it says so at warn once, then at info.
 */
export async function recoverStalledWork(options: {
  store: StateStore;
  worker: ThreadWorker;
  now: () => number;
  graceMs: number;
  logger: Logger;
  stopping?: AbortSignal;
  reported?: { newerRelease: boolean };
}): Promise<void> {
  const { store, worker, logger, stopping } = options;
  const stalledBefore = options.now() - options.graceMs;
  // A dead holder's lock outlives its last renewal by the TTL (the grace in create-bot): work it was
  // given before then has waited that long when the lock lapses, so it is taken at once. Threads
  // whose lock is live are left out by the store: a long turn keeps its old place in the index, and
  // a batch of them would otherwise be tried (and refused) every sweep, ahead of a lost hand-off.
  const stalled = worker.room() > 0 && !stopping?.aborted ? await store.stalledThreads({ limit: BATCH, before: stalledBefore }) : [];
  for (const threadKey of stalled) {
    if (stopping?.aborted || worker.room() <= 0) break;
    // Awaited only until the lock is taken or refused: a recovered turn may take minutes and must not hold up the sweep.
    await worker.startPickUp(threadKey).catch((error: unknown) => logger.warn({ event: 'recovery-failed', threadKey, err: error }, 'could not pick up thread'));
  }
  if (stopping?.aborted) return;
  const decided = await store.completedSteps({ before: stalledBefore, limit: BATCH });
  if (decided.length === 0) return;
  // Read after the decided steps: a step still decided below was decided before this read, and the
  // write that decided it queued its resume (or it is one that was lost).
  const busy = await store.busyThreads({ limit: BUSY_THREADS_READ });
  if (busy.length >= BUSY_THREADS_READ) {
    logger.warn({ event: 'resume-recovery-deferred', busyThreads: busy.length }, 'too many threads with queued work to tell which decided steps were not resumed; trying again next sweep');
    return;
  }
  const busyThreads = new Set(busy);
  const leftToNewerRelease: string[] = [];
  const leaveToNewerRelease = async (stepId: string) => {
    leftToNewerRelease.push(stepId);
    // Listed as if completed then: looked at again NEWER_RELEASE_RETRY_MS from now, past the grace.
    await store.postponeCompleted({ stepId, until: stalledBefore + NEWER_RELEASE_RETRY_MS });
  };
  for (const stepId of decided) {
    if (stopping?.aborted) break;
    const step = await store.getStep(stepId).catch(newerSchemaOrThrow);
    if (step === NEWER_SCHEMA) {
      await leaveToNewerRelease(stepId);
      continue;
    }
    if (step?.phase !== 'complete') continue;
    // Its thread has queued or in-flight work: the resume waits its turn there (a backlog, a full
    // gate), or is being claimed now. A second one would resume the turn again once it ended.
    if (busyThreads.has(step.threadKey)) continue;
    // A step this release reads may wait in a thread a newer release saved (only the thread's schema
    // moved on): its resume would be left to that release again. Read only for a step to resume here.
    if ((await store.getThread(step.threadKey).catch(newerSchemaOrThrow)) === NEWER_SCHEMA) {
      await leaveToNewerRelease(stepId);
      continue;
    }
    if (stopping?.aborted) break;
    logger.warn({ event: 'resume-recovered', stepId }, 'resuming a decided step nobody resumed');
    // Recovered: the process that decided it may have stopped before drawing its card (`Lease.recovered`).
    void worker
      .submit(step.threadKey, { kind: 'resume', stepId, channel: step.channel, threadTs: step.threadTs, ...(step.traceparent ? { traceparent: step.traceparent } : {}) }, { recovered: true })
      .catch((error: unknown) => logger.warn({ event: 'recovery-failed', stepId, err: error }, 'could not resume step'));
  }
  if (leftToNewerRelease.length === 0) return;
  const firstTime = options.reported?.newerRelease !== true;
  if (options.reported) options.reported.newerRelease = true;
  logger[firstTime ? 'warn' : 'info'](
    { event: 'resumes-left-to-newer-release', steps: leftToNewerRelease.length, stepIds: leftToNewerRelease },
    'decided steps wait for a newer countersign release, which stored them or their threads; this one does not resume them',
  );
}
