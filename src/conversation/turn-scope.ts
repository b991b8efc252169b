import { type Context, ROOT_CONTEXT } from '@opentelemetry/api';
import type { AuditEventInput } from '../audit/audit-event.js';
import type { StepTransition } from '../approvals/transitions/step-transition.js';
import { FencedError } from '../store/fenced-error.js';
import type { ClosingSave, CommitResult, StateStore } from '../store/state-store.js';
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
  /**
   * Trims and saves the thread under the fence; `settled`: every started call's result is in it;
   * `audit`: events of what the save records, written in the same atomic write.
   */
  save(thread: ThreadState, options?: AuditedSaveOptions): Promise<void>;
  /**
   * `save` for the item's last write: kept, and sent with the queue's finish of the item in one
   * round trip (`takeClosingSave`). Until then a crash leaves the previous save, which every caller
   * can recover from (an outbox is posted again over the same messages). A later `save` or `flush`
   * writes it first.
   */
  saveAtEnd(thread: ThreadState, options?: SaveOptions): void;
  /**
   * Commits a step transition (a resume claim, with its audit events) and saves the thread in one
   * atomic write under the fence. Throws `FencedError` when fenced; 'conflict' or 'not-found' leave
   * all of it unchanged.
   */
  saveWithStep(transition: StepTransition, thread: ThreadState, options?: SaveOptions): Promise<Exclude<CommitResult, 'fenced'>>;
  /** Writes a kept `saveAtEnd` now, before reading the thread back. */
  flush(): Promise<void>;
  /** The kept last save, for the worker to send with `finishWork`; undefined if none is waiting. */
  takeClosingSave(): ClosingSave | undefined;
}

interface SaveOptions {
  settled?: boolean;
}

interface AuditedSaveOptions extends SaveOptions {
  audit?: readonly AuditEventInput[];
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
  let kept: ClosingSave | undefined;
  const prepare = (thread: ThreadState) => {
    thread.messages = trimHistory(thread.messages, limits);
    thread.updatedAt = now();
  };
  const write = (thread: ThreadState, saveOptions?: AuditedSaveOptions) => lease.guard(() => store.saveThread(thread, limits.historyTtlMs, lease.fence, saveOptions));
  const flush = async () => {
    const closing = kept;
    kept = undefined;
    if (closing) await write(closing.thread, { settled: closing.settled ?? false });
  };
  return {
    lease,
    traceContext: options.traceContext ?? ROOT_CONTEXT,
    messenger: fencedMessenger(options.messenger, lease),
    async save(thread, saveOptions) {
      // A kept save of this same thread is part of what is saved now; another thread's goes first.
      if (kept?.thread.threadKey === thread.threadKey) kept = undefined;
      await flush();
      prepare(thread);
      await write(thread, saveOptions);
    },
    async saveWithStep(transition, thread, saveOptions) {
      if (kept?.thread.threadKey === thread.threadKey) kept = undefined;
      await flush();
      prepare(thread);
      return lease.guard(async () => {
        const committed = await store.commitStepWithThread({ transition, thread, ttlMs: limits.historyTtlMs, settled: saveOptions?.settled ?? false });
        if (committed === 'fenced') throw new FencedError(lease.fence.threadKey);
        return committed;
      });
    },
    saveAtEnd(thread, saveOptions) {
      prepare(thread);
      // A copy: the save is of the thread as it is now, whatever the caller does with it after.
      kept = { thread: { ...thread, messages: [...thread.messages] }, ttlMs: limits.historyTtlMs, ...(saveOptions?.settled ? { settled: true } : {}) };
    },
    flush,
    takeClosingSave() {
      const closing = kept;
      kept = undefined;
      return closing;
    },
  };
}
