import { type Context, ROOT_CONTEXT } from '@opentelemetry/api';
import type { StateStore } from '../store/state-store.js';
import type { ThreadState } from '../store/thread-state.js';
import { trimHistory } from '../agent/history.js';
import { fencedMessenger } from './fenced-messenger.js';
import type { Lease } from './lease.js';
import type { ThreadMessenger } from './thread-messenger.js';

export interface HistoryLimits {
  historyTtlMs: number;
  maxMessages: number;
  maxBytes: number;
}

/**
 * Everything one work item may change, bound to the lease it runs under: saves carry the fencing
 * token and Slack writes check it first, so once another process holds the thread this item has no
 * further effect anywhere.
 */
export interface TurnScope {
  lease: Lease;
  messenger: ThreadMessenger;
  /** The trace context of the item's span: what the item does is traced as its children. */
  traceContext: Context;
  /** Trims and saves the thread under the fence; `settled`: every started call's result is in it. */
  save(thread: ThreadState, options?: { settled?: boolean }): Promise<void>;
}

export function createTurnScope(options: {
  store: StateStore;
  messenger: ThreadMessenger;
  lease: Lease;
  limits: HistoryLimits;
  now: () => number;
  traceContext?: Context;
}): TurnScope {
  const { store, lease, limits, now } = options;
  return {
    lease,
    traceContext: options.traceContext ?? ROOT_CONTEXT,
    messenger: fencedMessenger(options.messenger, lease),
    async save(thread, saveOptions) {
      thread.messages = trimHistory(thread.messages, limits);
      thread.updatedAt = now();
      await lease.guard(() => store.saveThread(thread, limits.historyTtlMs, lease.fence, saveOptions));
    },
  };
}
