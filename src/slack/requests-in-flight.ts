import type { AnyMiddlewareArgs, Middleware } from '@slack/bolt';

export interface RequestsInFlight {
  /**
   * Bolt global middleware: a request counts from when it reaches the middleware (after an event's
   * ack) until its last listener returns, whichever receiver brought it (HTTP, Socket Mode, the
   * front thread).
   */
  readonly middleware: Middleware<AnyMiddlewareArgs>;
  /** Requests whose listeners are still running. */
  count(): number;
  /** Resolves once none is running ('settled'), or after `timeoutMs` ('timed-out'), whichever comes first. */
  settled(options: { timeoutMs: number }): Promise<'settled' | 'timed-out'>;
}

/**
 * Slack requests still being taken in. Slack has its 200 before a message's listener has done its
 * store round trips and queued the work: a stop that closed the store meanwhile would lose a
 * message Slack will not send again, so stopping waits for these first.
 */
export function createRequestsInFlight(): RequestsInFlight {
  let running = 0;
  const waiters = new Set<() => void>();

  return {
    middleware: async ({ next }) => {
      running += 1;
      try {
        await next();
      } finally {
        running -= 1;
        if (running === 0) for (const waiter of [...waiters]) waiter();
      }
    },
    count: () => running,
    settled({ timeoutMs }) {
      if (running === 0) return Promise.resolve('settled');
      return new Promise((resolve) => {
        const done = (outcome: 'settled' | 'timed-out') => {
          clearTimeout(timer);
          waiters.delete(onSettled);
          resolve(outcome);
        };
        const onSettled = () => done('settled');
        const timer = setTimeout(() => done('timed-out'), timeoutMs);
        waiters.add(onSettled);
      });
    },
  };
}
