import type { Logger } from 'pino';
import type { StateStore } from '../store/state-store.js';
import { decodeWorkItem, encodeWorkItem, type WorkItem } from './work-item.js';

export interface ThreadWorkerOptions {
  store: StateStore;
  handle: (item: WorkItem) => Promise<void>;
  logger: Logger;
  /** The lock outlives a crashed holder by at most this long; a live holder renews it. */
  lockTtlMs?: number;
  /**
   * Items handled at once by this process. A burst of clicks then waits in Redis (each thread's
   * lock renewed) instead of piling turn work onto the event loop that must ack Slack in 3 s.
   */
  maxConcurrentItems?: number;
}

export interface ThreadWorker {
  /**
   * Queues work for a thread. The caller that gets the thread's lock drains the queue, one item at
   * a time; everyone else returns at once. The promise settles when this caller's drain is done.
   */
  submit(threadKey: string, item: WorkItem): Promise<void>;
  /** Drains a thread whose lock is free but which still has work, e.g. left by a process that died. */
  pickUp(threadKey: string): Promise<boolean>;
  /** Resolves when every drain started by this process has finished (graceful shutdown, tests). */
  idle(): Promise<void>;
}

const DEFAULT_LOCK_TTL_MS = 30_000;
const DEFAULT_MAX_CONCURRENT_ITEMS = 8;

export function createThreadWorker({
  store,
  handle,
  logger,
  lockTtlMs = DEFAULT_LOCK_TTL_MS,
  maxConcurrentItems = DEFAULT_MAX_CONCURRENT_ITEMS,
}: ThreadWorkerOptions): ThreadWorker {
  const running = new Set<Promise<void>>();
  const slots = createSlots(maxConcurrentItems);

  async function drain(threadKey: string, token: string): Promise<void> {
    // Renew at a third of the TTL so one slow Redis reply cannot let the lock lapse mid-turn.
    const heartbeat = setInterval(() => {
      store.extendLock(threadKey, token, lockTtlMs).then(
        (held) => held || logger.warn({ event: 'thread-lock-lost', threadKey }, 'thread lock lost while a turn was running'),
        (error: unknown) => logger.warn({ event: 'thread-lock-renew-failed', threadKey, err: error }, 'could not renew thread lock'),
      );
    }, Math.max(10, Math.floor(lockTtlMs / 3)));
    try {
      // An item a dead holder was handling comes first: it was taken but never finished.
      let encoded = await store.takeLeftover(threadKey);
      if (encoded !== undefined) logger.warn({ event: 'work-item-recovered', threadKey }, 'picking up work a stopped process left');
      for (;;) {
        encoded ??= await store.takeWork(threadKey);
        if (encoded === undefined) {
          if (await store.releaseLockIfIdle(threadKey, token, lockTtlMs)) return;
          continue;
        }
        const item = decodeWorkItem(encoded);
        if (!item) logger.warn({ event: 'work-item-invalid', threadKey }, 'dropped an unreadable work item');
        else {
          const release = await slots.acquire();
          try {
            await handle(item);
          } catch (error) {
            logger.error({ event: 'work-item-failed', threadKey, kind: item.kind, err: error }, 'work item failed');
          } finally {
            release();
          }
        }
        await store.finishWork(threadKey);
        encoded = undefined;
      }
    } finally {
      clearInterval(heartbeat);
    }
  }

  async function run(threadKey: string, token: string): Promise<void> {
    // A drain that fails (the store went away) leaves its items queued; the lock expires and the
    // next message, click or recovery sweep on the thread drains them.
    const drained = drain(threadKey, token).catch((error: unknown) => {
      logger.error({ event: 'thread-drain-failed', threadKey, err: error }, 'stopped draining thread queue');
    });
    running.add(drained);
    try {
      await drained;
    } finally {
      running.delete(drained);
    }
  }

  return {
    async pickUp(threadKey) {
      const token = await store.tryLock(threadKey, lockTtlMs);
      if (token === undefined) return false;
      await run(threadKey, token);
      return true;
    },
    async submit(threadKey, item) {
      const token = await store.enqueueWork(threadKey, encodeWorkItem(item), lockTtlMs);
      if (token === undefined) return;
      await run(threadKey, token);
    },
    async idle() {
      while (running.size > 0) await Promise.allSettled([...running]);
    },
  };
}

/** A counting semaphore: at most `size` holders; the rest wait in arrival order. */
function createSlots(size: number): { acquire(): Promise<() => void> } {
  let free = Math.max(1, size);
  const waiting: Array<() => void> = [];
  const release = () => {
    const next = waiting.shift();
    if (next) next();
    else free += 1;
  };
  return {
    async acquire() {
      if (free > 0) free -= 1;
      else await new Promise<void>((resolve) => waiting.push(resolve));
      return release;
    },
  };
}
