import { isFencedError } from './fenced-error.js';

/**
 * Told of Redis trouble, for the operator's metrics: `connection` when a client reports an error
 * (refused, reset, timed out, wrong password), `command` when a store operation fails. A fenced
 * write is an expected outcome, not a Redis failure, and is not reported.
 */
export type RedisFailureListener = (failure: { kind: 'connection' | 'command'; error: unknown }) => void;

/**
 * Wraps every method of `target` so a rejected call is reported (and still rejects). `active`
 * says whether to report at all: a store being closed fails its last calls on purpose.
 */
export function reportingCommandFailures<TARGET extends object>(target: TARGET, options: { onFailure: RedisFailureListener; active: () => boolean }): TARGET {
  const report = (error: unknown) => {
    if (!options.active() || isFencedError(error)) return;
    try {
      options.onFailure({ kind: 'command', error });
    } catch {
      // Counting must never change what the caller sees.
    }
  };
  const wrapped: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(target)) {
    wrapped[name] =
      typeof value === 'function'
        ? (...args: unknown[]) => {
            const result: unknown = value.apply(target, args);
            if (!(result instanceof Promise)) return result;
            return result.catch((error: unknown) => {
              report(error);
              throw error;
            });
          }
        : value;
  }
  return wrapped as TARGET;
}
