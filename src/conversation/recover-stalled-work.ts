import type { Logger } from 'pino';
import type { StateStore } from '../store/state-store.js';
import type { ThreadWorker } from './thread-worker.js';

/** Work looked at per sweep, so one sweep stays short. */
const BATCH = 20;

/**
 * Work a dead process left behind, found from the store rather than from memory, so any replica
 * (or the restarted process) finishes it: threads with queued or in-flight items whose lock has
 * lapsed are drained, and steps that were fully decided but never resumed are resumed. Claims in
 * the store keep each of these to one process.
 */
export async function recoverStalledWork(options: { store: StateStore; worker: ThreadWorker; now: () => number; graceMs: number; logger: Logger }): Promise<void> {
  const { store, worker, logger } = options;
  for (const threadKey of await store.busyThreads({ limit: BATCH })) {
    // Not awaited: a recovered turn may take minutes and must not hold up the sweep.
    void worker.pickUp(threadKey).catch((error: unknown) => logger.warn({ event: 'recovery-failed', threadKey, err: error }, 'could not pick up thread'));
  }
  for (const stepId of await store.completedSteps({ before: options.now() - options.graceMs, limit: BATCH })) {
    const step = await store.getStep(stepId);
    if (!step || step.phase !== 'complete') continue;
    logger.warn({ event: 'resume-recovered', stepId }, 'resuming a decided step nobody resumed');
    void worker
      .submit(step.threadKey, { kind: 'resume', stepId, channel: step.channel, threadTs: step.threadTs, ...(step.traceparent ? { traceparent: step.traceparent } : {}) })
      .catch((error: unknown) => logger.warn({ event: 'recovery-failed', stepId, err: error }, 'could not resume step'));
  }
}
