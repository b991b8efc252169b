import type { StateStore } from '../../src/store/state-store.js';

/**
 * The store with Redis out for the first executing marker: the approved call never starts, and the
 * turn fails (its model request is then scripted to fail), keeping the approval for Try again.
 */
export function markerWriteFailsOnce(store: StateStore): StateStore {
  let failed = false;
  return {
    ...store,
    markExecuting: async (options) => {
      if (!failed) {
        failed = true;
        throw new Error('Connection is closed.');
      }
      return store.markExecuting(options);
    },
  };
}
