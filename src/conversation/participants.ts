import type { ThreadState } from '../store/thread-state.js';

/** People the model may mention in a thread; the oldest are forgotten first. */
const PARTICIPANTS_KEPT = 100;

export function addParticipants(thread: ThreadState, userIds: readonly string[]): void {
  const known = thread.participants ?? [];
  const fresh = userIds.filter((userId) => !known.includes(userId));
  if (fresh.length > 0) thread.participants = [...new Set([...known, ...fresh])].slice(-PARTICIPANTS_KEPT);
}

/** The model may notify the people already in the thread (its authors and deciders), and no one else. */
export function mentionable(thread: ThreadState): readonly string[] {
  return thread.participants ?? [];
}
