import { PENDING_STEP_SCHEMA_VERSION, type PendingStep } from '../approvals/pending-step.js';
import { legacyStepFromHash } from './legacy-step.js';

/**
 * A pending step is stored as a Redis hash: `data` (the step as JSON), `revision` (which every
 * change compares and bumps, so a change is written only over the state it was computed from),
 * `phase` (a copy of the step's, for people inspecting Redis) and `card` (the card's ts, set once
 * the card is posted, outside the revision).
 */
export function stepData(step: PendingStep): string {
  const { cardTs: _cardTs, revision: _revision, ...data } = step;
  return JSON.stringify(data);
}

/** Inverse of `stepData` plus the hash's other fields; accepts the flat array HGETALL returns from Lua. */
export function stepFromRecord(fields: Record<string, string> | string[]): PendingStep | undefined {
  const record = Array.isArray(fields) ? pairsToRecord(fields) : fields;
  if (record.data === undefined) return legacyStepFromHash(record);
  const data = JSON.parse(record.data) as Omit<PendingStep, 'revision' | 'cardTs'>;
  if (data.schemaVersion !== PENDING_STEP_SCHEMA_VERSION) return undefined;
  return { ...data, revision: Number(record.revision ?? 0), ...(record.card === undefined ? {} : { cardTs: record.card }) };
}

function pairsToRecord(pairs: string[]): Record<string, string> {
  const record: Record<string, string> = {};
  for (let index = 0; index + 1 < pairs.length; index += 2) record[pairs[index]!] = pairs[index + 1]!;
  return record;
}
