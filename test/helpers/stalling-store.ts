import type { StateStore } from '../../src/store/state-store.js';

/**
 * A store whose every call first awaits `stall`: a process stalled by a GC pause or a frozen VM would
 * not run its store calls (nor renew its locks) either, while a replica on the same Redis goes on.
 */
export function stallable(stall: () => Promise<void>, wrapped: StateStore): StateStore {
  return new Proxy(wrapped, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (typeof value !== 'function' || property === 'close') return value;
      return async (...args: unknown[]) => {
        await stall();
        return (value as (...rest: unknown[]) => unknown).apply(target, args);
      };
    },
  });
}
