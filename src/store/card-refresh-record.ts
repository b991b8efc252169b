import { recordFields } from './record-fields.js';
import type { PendingCardRefresh, UnconfirmedRepost } from './state-store.js';

/**
 * A card refresh as the stores keep it: the same text for the same refresh, so the record found by
 * a sweep is the one that is moved or forgotten (a member of a sorted set, in Redis). Its fields are
 * written in one order, whatever order the object had them in.
 */
export function cardRefreshRecord({ stepId, since, unconfirmed }: PendingCardRefresh): string {
  if (unconfirmed === undefined) return JSON.stringify({ stepId, since });
  const { mark, text, after, replacing, revision, channel, threadTs, threadKey, recorded } = unconfirmed;
  // `recorded` only when set: a record kept without it has the same text as before the field existed.
  // `replacing` is absent for a step's first card (in its place, so a card posted again reads as before).
  return JSON.stringify({
    stepId,
    since,
    unconfirmed: { mark, text, after, ...(replacing === undefined ? {} : { replacing }), revision, channel, threadTs, threadKey, ...(recorded === undefined ? {} : { recorded }) },
  });
}

/** Undefined for a record that is not a card refresh. */
export function parseCardRefreshRecord(record: string): PendingCardRefresh | undefined {
  const { stepId, since, unconfirmed } = recordFields(record);
  if (typeof stepId !== 'string' || typeof since !== 'number') return undefined;
  if (unconfirmed === undefined) return { stepId, since };
  const repost = parseUnconfirmedRepost(unconfirmed);
  return repost === undefined ? undefined : { stepId, since, unconfirmed: repost };
}

function parseUnconfirmedRepost(value: unknown): UnconfirmedRepost | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const { mark, text, after, replacing, revision, channel, threadTs, threadKey, recorded } = value as Record<string, unknown>;
  if (typeof mark !== 'string' || typeof text !== 'string' || typeof after !== 'string' || (replacing !== undefined && typeof replacing !== 'string')) return undefined;
  if (typeof revision !== 'number' || typeof channel !== 'string' || typeof threadTs !== 'string' || typeof threadKey !== 'string') return undefined;
  if (recorded !== undefined && typeof recorded !== 'string') return undefined;
  return { mark, text, after, ...(replacing === undefined ? {} : { replacing }), revision, channel, threadTs, threadKey, ...(recorded === undefined ? {} : { recorded }) };
}
