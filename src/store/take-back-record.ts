import { recordFields } from './record-fields.js';
import type { PendingTakeBack } from './state-store.js';

/**
 * A take-back as the stores keep it: the same text for the same take-back, so the record found by
 * a sweep is the one that is moved or forgotten (a member of a sorted set, in Redis).
 */
export function takeBackRecord({ channel, ts, threadKey, stepId, since }: PendingTakeBack): string {
  return JSON.stringify(stepId === undefined ? { channel, ts, threadKey, since } : { channel, ts, threadKey, stepId, since });
}

/** Undefined for a record that is not a take-back. */
export function parseTakeBackRecord(record: string): PendingTakeBack | undefined {
  const { channel, ts, threadKey, stepId, since } = recordFields(record);
  if (typeof channel !== 'string' || typeof ts !== 'string' || typeof threadKey !== 'string' || typeof since !== 'number') return undefined;
  if (stepId !== undefined && typeof stepId !== 'string') return undefined;
  return { channel, ts, threadKey, ...(stepId === undefined ? {} : { stepId }), since };
}
