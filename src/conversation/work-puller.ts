import type { Logger } from 'pino';
import type { WorkQueueStore } from '../store/state-store.js';
import type { LoadGate } from './load-gate.js';
import type { ThreadWorker } from './thread-worker.js';

export interface WorkPuller {
  start(): void;
  /** Stops taking threads at once; drains already started finish (`ThreadWorker.idle`). */
  stop(): Promise<void>;
  /**
   * Resolves once a stopped puller's loop has ended: its last wait ended (at once: `stop` aborts it),
   * and any thread that wait took given back. The store must stay open until then.
   */
  idle(): Promise<void>;
}

/** How long one wait for a handed-off thread blocks before the loop looks at its own state again. */
const WAIT_MS = 1_000;
const PAUSE_AFTER_FAILURE_MS = 500;
/** Taken while the gate has room; more would hold hints here that another worker could start sooner. */
const MAX_THREADS_PER_WAKE_UP = 32;

/**
 * A worker's side of the hand-off: takes threads receivers offered (`handOffWork`) while the gate
 * says this process has room, and drains each here. Work that waits, waits in Redis, where any
 * worker with room can take it.
 */
export function createWorkPuller(options: { store: Pick<WorkQueueStore, 'nextReadyThreads' | 'returnReadyThreads'>; worker: ThreadWorker; gate: LoadGate; logger: Logger }): WorkPuller {
  const { store, worker, gate, logger } = options;
  let running = false;
  let loop: Promise<void> | undefined;
  /** Ends the wait in progress at `stop`: every bot stop would otherwise sit out up to `WAIT_MS`. */
  let stopping = new AbortController();

  /**
   * Threads taken while this worker was told to stop are left to the other workers: their work stays
   * queued in Redis (in the busy-threads index) and their hints go back to the ready list for a live
   * worker to take at once. Among them may be a thread this process's own drain handed back on its
   * way out (`ThreadWorker.stopTaking`), caught by the wait still in progress: dropped, its work
   * would wait for a recovery sweep (`recoverStalledWork`), which is also where a failed return leaves it.
   */
  async function leave(threadKeys: string[]): Promise<void> {
    logger.info({ event: 'work-pull-left', threads: threadKeys.length }, 'stopping: left handed-off threads to the other workers');
    await giveBack(threadKeys);
  }

  /**
   * Threads taken when the gate had room that it no longer has (the event loop fell behind during
   * the wait) go back to the head of the ready list at once, keeping their turn, for a worker with
   * room: held here, they would wait for this loop to recover while idle workers find the list
   * empty. A failed return costs latency only: the recovery sweep finds their work.
   */
  async function giveBack(threadKeys: string[]): Promise<void> {
    try {
      await store.returnReadyThreads(threadKeys);
      logger.debug({ event: 'work-pull-returned', threads: threadKeys.length }, 'returned handed-off threads to the ready list for another worker');
    } catch (error) {
      logger.warn({ event: 'work-pull-return-failed', threads: threadKeys.length, err: error }, 'could not return handed-off threads to the ready list; the recovery sweep will find them');
    }
  }

  async function pull(): Promise<void> {
    while (running) {
      await gate.whenRoom();
      if (!running) return;
      let threadKeys: string[];
      try {
        // As many as the gate has room for: a burst of hand-offs is taken in one wake-up, not one
        // round trip (behind a whole turn of this busy event loop) per thread.
        threadKeys = await store.nextReadyThreads({ timeoutMs: WAIT_MS, max: Math.min(MAX_THREADS_PER_WAKE_UP, Math.max(1, gate.room())), signal: stopping.signal });
      } catch (error) {
        if (!running) return;
        logger.warn({ event: 'work-pull-failed', err: error }, 'could not wait for handed-off work; trying again');
        await new Promise((resolve) => setTimeout(resolve, PAUSE_AFTER_FAILURE_MS));
        continue;
      }
      for (const [index, threadKey] of threadKeys.entries()) {
        if (!running) return leave(threadKeys.slice(index));
        // Room was counted before the wait; the gate may have none now. Never wait for it holding hints.
        if (gate.room() <= 0) {
          await giveBack(threadKeys.slice(index));
          break;
        }
        // Admitted at once: the gate has room and nothing runs between the check and this call.
        const release = await gate.acquire();
        if (!running) {
          release();
          return leave(threadKeys.slice(index));
        }
        worker
          .pickUp(threadKey)
          .catch((error: unknown) => logger.warn({ event: 'work-pickup-failed', threadKey, err: error }, 'could not pick up a handed-off thread'))
          .finally(release);
      }
    }
  }

  return {
    start() {
      if (running) return;
      running = true;
      stopping = new AbortController();
      loop = pull();
    },
    async stop() {
      // Not awaited here: the wait for work in progress ends at once (`idle`), and the drains this
      // puller started are awaited through `ThreadWorker.idle`.
      running = false;
      stopping.abort();
    },
    async idle() {
      await loop;
    },
  };
}
