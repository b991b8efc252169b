import type { CardRefreshStore, PendingCardRefresh, PendingTakeBack, TakeBackStore } from './state-store.js';

/**
 * Work Slack did not complete, kept until it is: the take-backs and the card refreshes are both
 * this, each with its own record. One implementation a store (`redis-kept-schedule.ts`,
 * `memory-kept-schedule.ts`) serves every kind, so the kinds cannot drift apart; the store's named
 * methods delegate to it. What each method promises is said on `TakeBackStore`.
 */
export interface KeptSchedule<T> {
  schedule(item: T, at: number): Promise<void>;
  postpone(item: T, until: number): Promise<boolean>;
  claim(item: T, options: { now: number; until: number }): Promise<boolean>;
  due(options: { now: number; limit: number }): Promise<T[]>;
  forget(item: T): Promise<boolean>;
}

/** The `TakeBackStore` and `CardRefreshStore` methods of a store, from its two schedules. */
export function keptScheduleMethods({ takeBacks, cardRefreshes }: { takeBacks: KeptSchedule<PendingTakeBack>; cardRefreshes: KeptSchedule<PendingCardRefresh> }): TakeBackStore & CardRefreshStore {
  return {
    scheduleTakeBack: takeBacks.schedule,
    postponeTakeBack: takeBacks.postpone,
    claimTakeBack: takeBacks.claim,
    dueTakeBacks: takeBacks.due,
    forgetTakeBack: takeBacks.forget,
    scheduleCardRefresh: cardRefreshes.schedule,
    postponeCardRefresh: cardRefreshes.postpone,
    claimCardRefresh: cardRefreshes.claim,
    dueCardRefreshes: cardRefreshes.due,
    forgetCardRefresh: cardRefreshes.forget,
  };
}
