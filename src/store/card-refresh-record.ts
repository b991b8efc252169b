import { recordFields } from './record-fields.js';
import type { PendingCardRefresh } from './state-store.js';

/**
 * A card refresh as the stores keep it: the same text for the same refresh, so the record found by
 * a sweep is the one that is moved or forgotten (a member of a sorted set, in Redis).
 */
export function cardRefreshRecord({ stepId, since }: PendingCardRefresh): string {
  return JSON.stringify({ stepId, since });
}

/** Undefined for a record that is not a card refresh. */
export function parseCardRefreshRecord(record: string): PendingCardRefresh | undefined {
  const { stepId, since } = recordFields(record);
  if (typeof stepId !== 'string' || typeof since !== 'number') return undefined;
  return { stepId, since };
}
