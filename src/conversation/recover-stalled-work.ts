import type { Logger } from 'pino';
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
 */
export async function recoverStalledWork(options: { store: StateStore; worker: ThreadWorker; now: () => number; graceMs: number; logger: Logger; stopping?: AbortSignal }): Promise<void> {
  const { store, worker, logger, stopping } = options;
  const stalledBefore = options.now() - options.graceMs;
  // A dead holder's lock outlives its last renewal by the TTL (the grace in create-bot): work it was
  // given before then has waited that long when the lock lapses, so it is taken at once.
  const stalled = worker.room() > 0 && !stopping?.aborted ? await store.busyThreads({ limit: BATCH, before: stalledBefore }) : [];
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
  for (const stepId of decided) {
    // A step a newer release wrote is left to that release's sweeps, which resume it.
    const step = await store.getStep(stepId).catch(newerSchemaOrThrow);
    if (stopping?.aborted) return;
    if (step === NEWER_SCHEMA || !step || step.phase !== 'complete') continue;
    // Its thread has queued or in-flight work: the resume waits its turn there (a backlog, a full
    // gate), or is being claimed now. A second one would resume the turn again once it ended.
    if (busyThreads.has(step.threadKey)) continue;
    logger.warn({ event: 'resume-recovered', stepId }, 'resuming a decided step nobody resumed');
    void worker
      .submit(step.threadKey, { kind: 'resume', stepId, channel: step.channel, threadTs: step.threadTs, ...(step.traceparent ? { traceparent: step.traceparent } : {}) })
      .catch((error: unknown) => logger.warn({ event: 'recovery-failed', stepId, err: error }, 'could not resume step'));
  }
}
