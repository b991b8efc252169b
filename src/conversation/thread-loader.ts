import type { Logger } from 'pino';
import { parseHistory } from '../agent/history.js';
import { newThreadState, threadKeyOf, type ThreadAddress, type ThreadState } from '../store/thread-state.js';
import type { PhaseDependencies } from './phase-dependencies.js';

export type LoadThread = (address: ThreadAddress) => Promise<ThreadState>;

/** Reads a thread, its history validated as untrusted: a history that fails validation starts fresh. */
export function createThreadLoader({ store, logger, now }: Pick<PhaseDependencies, 'store' | 'logger' | 'now'>): LoadThread {
  return async (address) => validatedThread({ address, stored: await store.getThread(threadKeyOf(address)), logger, now });
}

/** A thread as read from the store (undefined: not followed yet), its history validated as untrusted. */
export function validatedThread(options: { address: ThreadAddress; stored: ThreadState | undefined; logger: Logger; now: () => number }): ThreadState {
  const { address, stored } = options;
  if (!stored) return newThreadState(address, options.now());
  const history = parseHistory(stored.messages);
  if (!history.valid) options.logger.warn({ event: 'history-invalid', threadKey: threadKeyOf(address) }, 'stored history failed validation; starting fresh');
  return { ...stored, messages: history.messages };
}
