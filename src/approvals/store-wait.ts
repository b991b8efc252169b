import { setTimeout as delay } from 'node:timers/promises';
import type { Logger } from 'pino';
import type { Metrics } from '../metrics/metrics.js';
import { isStoreUnavailable } from '../store/store-unavailable.js';

/** Between tries while the store is unavailable: the bot's own reconnects come at least this often. */
const STORE_RETRY_MS = 250;

/** Which decision is waiting, and until when (epoch ms) it may; `waited` is set by the first wait. */
interface WaitContext {
  stepId: string;
  waitUntil: number;
  waited?: boolean;
}

/**
 * Waiting out a store that is unavailable (a restart, a reconnect after a failover) within a deadline, for a
 * decision's reads and writes. Anything else, or a wait past the deadline, rethrows the error.
 */
export function createStoreWait({ logger, metrics }: { logger: Logger; metrics: Metrics }) {
  async function waitOutUnavailable(error: unknown, context: WaitContext): Promise<void> {
    const { stepId, waitUntil } = context;
    if (!isStoreUnavailable(error) || Date.now() + STORE_RETRY_MS > waitUntil) throw error;
    // Once per decision: an outage of a few seconds is a score of tries per click.
    if (!context.waited) logger.warn({ event: 'decision-store-unavailable', stepId, err: error }, 'the store is unavailable; trying the decision again shortly');
    context.waited = true;
    metrics.decisionWaitedForStore();
    await delay(STORE_RETRY_MS);
  }

  return {
    /** Runs `read`; while the store is unavailable and there is time left, waits and runs it again. */
    async whileStoreReturns<T>(read: () => Promise<T>, context: WaitContext): Promise<T> {
      for (;;) {
        try {
          return await read();
        } catch (error) {
          await waitOutUnavailable(error, context);
        }
      }
    },
    /**
     * For a write's rejection: once the wait is over, `unavailable`, and the caller reads, judges
     * and writes again (the write may have landed before its reply was lost; the read finds it).
     */
    unavailableAsRetry(context: WaitContext) {
      return async (error: unknown): Promise<{ result: 'unavailable' }> => {
        await waitOutUnavailable(error, context);
        return { result: 'unavailable' };
      };
    },
  };
}
