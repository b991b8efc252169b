/**
 * Promises that resolve once a condition over recorded traffic holds. The fakes call `recheck()`
 * after recording each request, so a waiter sees calls made before and after it started waiting.
 */
export interface ConditionWaiters {
  waitFor<T>(options: { check: () => T | undefined; timeoutMs: number; describeTimeout: (timeoutMs: number) => string }): Promise<T>;
  recheck(): void;
  cancelAll(reason: string): void;
}

interface PendingWaiter {
  recheck(): boolean;
  cancel(reason: string): void;
}

export function createConditionWaiters(): ConditionWaiters {
  const pending = new Set<PendingWaiter>();
  return {
    waitFor({ check, timeoutMs, describeTimeout }) {
      const already = check();
      if (already !== undefined) return Promise.resolve(already);
      return new Promise((resolve, reject) => {
        const waiter: PendingWaiter = {
          recheck() {
            const value = check();
            if (value === undefined) return false;
            clearTimeout(timer);
            resolve(value);
            return true;
          },
          cancel(reason) {
            clearTimeout(timer);
            reject(new Error(reason));
          },
        };
        // Built before the timer fires so the message lists everything recorded up to the deadline.
        const timer = setTimeout(() => {
          pending.delete(waiter);
          reject(new Error(describeTimeout(timeoutMs)));
        }, timeoutMs);
        pending.add(waiter);
      });
    },
    recheck() {
      for (const waiter of [...pending]) {
        if (waiter.recheck()) pending.delete(waiter);
      }
    },
    cancelAll(reason) {
      for (const waiter of pending) waiter.cancel(reason);
      pending.clear();
    },
  };
}
