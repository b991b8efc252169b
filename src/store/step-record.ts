import { PENDING_STEP_SCHEMA_VERSION, type CardCopy, type PendingStep } from '../approvals/pending-step.js';
import { legacyStepFromHash } from './legacy-step.js';
import { refuseNewerSchema } from './newer-schema-error.js';

/**
 * A pending step is stored as a Redis hash: `data` (the step as JSON), `revision` (which every
 * change compares and bumps, so a change is written only over the state it was computed from),
 * `phase` (a copy of the step's, for people inspecting Redis) and `card` (the card's ts, set once
 * the card is posted, outside the revision), with `card-link` (its permalink) and one `copy:<channel>`
 * field per copy of the card outside the thread (JSON), also outside the revision: posting a
 * copy races no decision.
 */
export function stepData(step: PendingStep): string {
  const { cardTs: _cardTs, cardLink: _cardLink, copies: _copies, revision: _revision, ...data } = step;
  return JSON.stringify(data);
}

export const CARD_LINK_FIELD = 'card-link';
const COPY_FIELD_PREFIX = 'copy:';

/** The hash field of a copy: one per channel, so posting the same copy twice keeps one. */
export function copyField(copy: Pick<CardCopy, 'channel'>): string {
  return `${COPY_FIELD_PREFIX}${copy.channel}`;
}

function copiesOf(record: Record<string, string>): CardCopy[] {
  return Object.keys(record)
    .filter((field) => field.startsWith(COPY_FIELD_PREFIX))
    .sort()
    .map((field) => JSON.parse(record[field]!) as CardCopy);
}

/**
 * Inverse of `stepData` plus the hash's other fields; accepts the flat array HGETALL returns from Lua.
 * A step a newer release stored throws `NewerSchemaError`: it exists, and must not be taken for gone.
 */
export function stepFromRecord(fields: Record<string, string> | string[]): PendingStep | undefined {
  const record = Array.isArray(fields) ? pairsToRecord(fields) : fields;
  if (record.data === undefined) return legacyStepFromHash(record);
  const data = JSON.parse(record.data) as Omit<PendingStep, 'revision' | 'cardTs' | 'cardLink' | 'copies'>;
  refuseNewerSchema({ kind: 'step', id: data.stepId, schemaVersion: data.schemaVersion, readable: PENDING_STEP_SCHEMA_VERSION });
  if (data.schemaVersion !== PENDING_STEP_SCHEMA_VERSION) return undefined;
  const copies = copiesOf(record);
  return {
    ...data,
    revision: Number(record.revision ?? 0),
    ...(record.card === undefined ? {} : { cardTs: record.card }),
    ...(record[CARD_LINK_FIELD] === undefined ? {} : { cardLink: record[CARD_LINK_FIELD] }),
    ...(copies.length === 0 ? {} : { copies }),
  };
}

function pairsToRecord(pairs: string[]): Record<string, string> {
  const record: Record<string, string> = {};
  for (let index = 0; index + 1 < pairs.length; index += 2) record[pairs[index]!] = pairs[index + 1]!;
  return record;
}
