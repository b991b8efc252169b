import { parseHistory } from '../agent/history.js';
import { newThreadState, threadKeyOf, type ThreadAddress, type ThreadState } from '../store/thread-state.js';
import type { PhaseDependencies } from './phase-dependencies.js';

export type LoadThread = (address: ThreadAddress) => Promise<ThreadState>;

/** Reads a thread, its history validated as untrusted: a history that fails validation starts fresh. */
export function createThreadLoader({ store, logger, now }: Pick<PhaseDependencies, 'store' | 'logger' | 'now'>): LoadThread {
  return async (address) => {
    const threadKey = threadKeyOf(address);
    const stored = await store.getThread(threadKey);
    if (!stored) return newThreadState(address, now());
    const history = parseHistory(stored.messages);
    if (!history.valid) logger.warn({ event: 'history-invalid', threadKey }, 'stored history failed validation; starting fresh');
    return { ...stored, messages: history.messages };
  };
}
