import { randomUUID } from 'node:crypto';
import { type Context, ROOT_CONTEXT } from '@opentelemetry/api';
import type { AuditEventInput } from '../audit/audit-event.js';
import type { StepTransition } from '../approvals/transitions/step-transition.js';
import { FencedError, isFencedError } from '../store/fenced-error.js';
import type { ClosingSave, CommitResult, NamedWrite, StateStore } from '../store/state-store.js';
import type { ThreadState } from '../store/thread-state.js';
import { trimHistory } from '../agent/history.js';
import type { ExecutionRecord } from '../agent/tool-set.js';
import { fencedMessenger } from './fenced-messenger.js';
import type { Lease } from './lease.js';
import type { MessagesToTakeBack, MessageTakeBacks } from './message-take-back.js';
import type { ThreadMessenger } from './thread-messenger.js';
import type { ItemEnd } from './thread-worker.js';

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
   * The item this scope runs (`workItemKey`): a resume of another step claimed inside it is
   * recorded with it (`ThreadState.inlineResume`), for whoever takes the item over. Unset in a
   * scope built for one phase alone (tests), which records none.
   */
  itemKey?: string;
  /**
   * Every call that ran (or started and threw) in this item, in each of its turns (`TurnOutcome.executions`),
   * and those refused before their start (`started: false`): should Redis lose the thread's state
   * before they are recorded, the thread is still told what ran (`state-lost-notice.ts`), so nobody
   * asks again for a call that already had its effect, nor is told a refused call ran.
   */
  executions: ExecutionRecord[];
  /**
   * Trims and saves the thread under the fence; `settled`: every started call's result is in it;
   * `audit`: events of what the save records, written in the same atomic write; `takeBack`: what
   * to undo should the save be refused as fenced (an effect only this save would account for);
   * `named`: a named write (`NamedWrite`) without a take-back, for a caller that undoes what the
   * save records itself, so a refusal as fenced means the save was never written.
   */
  save(thread: ThreadState, options?: AuditedSaveOptions & Pick<ItemEnd, 'takeBack'> & { named?: boolean }): Promise<void>;
  /**
   * `save` for the item's last write: kept, and sent with the queue's finish of the item in one
   * round trip (`takeItemEnd`). Until then a crash leaves the previous save, which every caller
   * can recover from (an outbox is posted again over the same messages). A later `save` or `flush`
   * writes it first. `takeBack`: what to undo should the save be refused as fenced (see `ItemEnd`).
   */
  saveAtEnd(thread: ThreadState, options?: SaveOptions & Pick<ItemEnd, 'takeBack'>): void;
  /**
   * Commits a step transition (a resume claim, with its audit events) and saves the thread in one
   * atomic write under the fence. Throws `FencedError` when fenced; 'conflict' or 'not-found' leave
   * all of it unchanged.
   */
  saveWithStep(transition: StepTransition, thread: ThreadState, options?: SaveOptions): Promise<Exclude<CommitResult, 'fenced'>>;
  /**
   * Removes messages this item posted that nothing records (see `takeBackUnrecorded`). Not fenced:
   * it is the clean-up of a process that lost the thread. What Slack would not remove now is tried
   * again (`MessageTakeBacks`).
   */
  takeBack(messages: MessagesToTakeBack): Promise<void>;
  /** Writes a kept `saveAtEnd` now, before reading the thread back. */
  flush(): Promise<void>;
  /** The kept last save and its take-back, for the worker's finish; undefined if none is waiting. */
  takeItemEnd(): ItemEnd | undefined;
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
  itemKey?: string;
  /** Built on the same store and messenger, shared with the sweep that tries kept take-backs again. */
  takeBacks: Pick<MessageTakeBacks, 'takeBack'>;
}): TurnScope {
  const { store, lease, limits, now } = options;
  let kept: { closing: ClosingSave; takeBack?: () => Promise<void> } | undefined;
  const prepare = (thread: ThreadState) => {
    const trimmed = trimHistory(thread.messages, limits);
    // What is trimmed away is forgotten for good, the ids of its calls too (see `callIdsForgotten`).
    if (trimmed.length < thread.messages.length) thread.callIdsForgotten = true;
    thread.messages = trimmed;
    thread.updatedAt = now();
  };
  const write = (thread: ThreadState, saveOptions?: AuditedSaveOptions & NamedWrite) => lease.guard(() => store.saveThread(thread, limits.historyTtlMs, lease.fence, saveOptions));
  // A kept save of this same thread is part of what is saved now (its take-back with it); another thread's goes first.
  const supersede = (thread: ThreadState) => {
    if (kept?.closing.thread.threadKey !== thread.threadKey) return undefined;
    const { takeBack } = kept;
    kept = undefined;
    return takeBack;
  };
  const flush = async () => {
    const closing = kept;
    kept = undefined;
    if (closing) await takingBackIfFenced(closing.takeBack, (named) => write(closing.closing.thread, { settled: closing.closing.settled ?? false, ...named }));
  };
  return {
    lease,
    traceContext: options.traceContext ?? ROOT_CONTEXT,
    ...(options.itemKey === undefined ? {} : { itemKey: options.itemKey }),
    executions: [],
    messenger: fencedMessenger(options.messenger, lease),
    takeBack: (messages) => options.takeBacks.takeBack(messages),
    async save(thread, { takeBack: own, named: asked = false, ...saveOptions } = {}) {
      // A superseded kept save leaves nothing to flush; a flush refused means this save was never sent either.
      const takeBack = together(supersede(thread), own);
      await takingBackIfFenced(takeBack, async (named) => {
        await flush();
        prepare(thread);
        await write(thread, { ...saveOptions, ...(asked && !named.attempt ? { attempt: randomUUID() } : named) });
      });
    },
    async saveWithStep(transition, thread, saveOptions) {
      const takeBack = supersede(thread);
      await flush();
      prepare(thread);
      return takingBackIfFenced(takeBack, (named) =>
        lease.guard(async () => {
          const committed = await store.commitStepWithThread({ transition, thread, ttlMs: limits.historyTtlMs, settled: saveOptions?.settled ?? false, ...named });
          if (committed === 'fenced') throw new FencedError(lease.fence.threadKey);
          return committed;
        }),
      );
    },
    saveAtEnd(thread, saveOptions) {
      prepare(thread);
      // A copy: the save is of the thread as it is now, whatever the caller does with it after.
      const closing: ClosingSave = { thread: { ...thread, messages: [...thread.messages] }, ttlMs: limits.historyTtlMs, ...(saveOptions?.settled ? { settled: true } : {}) };
      kept = { closing, ...(saveOptions?.takeBack ? { takeBack: saveOptions.takeBack } : {}) };
    },
    flush,
    takeItemEnd() {
      const end = kept;
      kept = undefined;
      return end;
    },
  };
}

type TakeBack = () => Promise<void>;

/**
 * Runs a fenced write that was to record an effect already made (a post). Refused as fenced, the
 * write is known not to have been made, and the thread's new holder goes on from the save before
 * it (showing the answer, or running the turn, again), so `takeBack` undoes the effect. Any other
 * failure leaves the effect: that write may have landed.
 */
export async function takingBackIfFenced<T>(takeBack: TakeBack | undefined, write: (named: NamedWrite) => Promise<T>): Promise<T> {
  try {
    // Named when something would be taken back: sent again by the client after its reply was lost,
    // once another process took the thread, such a write is answered as written, not fenced (which
    // would take back what it records).
    return await write(takeBack ? { attempt: randomUUID() } : {});
  } catch (error) {
    if (takeBack && isFencedError(error)) await takeBack().catch(() => {});
    throw error;
  }
}

function together(...takeBacks: (TakeBack | undefined)[]): TakeBack | undefined {
  const each = takeBacks.filter((takeBack) => takeBack !== undefined);
  if (each.length <= 1) return each[0];
  return async () => {
    for (const takeBack of each) await takeBack().catch(() => {});
  };
}
