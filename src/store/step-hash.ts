import { PENDING_STEP_SCHEMA_VERSION, type Decision, type PendingStep, type StepPhase } from '../approvals/pending-step.js';

/**
 * A pending step is stored as a Redis hash so Lua scripts can change one call's decision and the
 * phase atomically without decoding JSON: `meta` (immutable JSON), `phase`, `revision`, `undecided`
 * (count), `card`, one `c:<approvalId>` membership field per call and `d:<approvalId>` per decision.
 */
export function stepToHashFields(step: PendingStep): Record<string, string> {
  const { decisions, approvals, phase, revision, cardTs, ...meta } = step;
  const fields: Record<string, string> = {
    meta: JSON.stringify(meta),
    phase,
    revision: String(revision),
    undecided: String(step.calls.filter((call) => !Object.hasOwn(decisions, call.approvalId)).length),
  };
  if (cardTs !== undefined) fields.card = cardTs;
  for (const call of step.calls) fields[`c:${call.approvalId}`] = '1';
  for (const [approvalId, decision] of Object.entries(decisions)) fields[`d:${approvalId}`] = JSON.stringify(decision);
  for (const [approvalId, partial] of Object.entries(approvals ?? {})) {
    for (const approval of partial) fields[`a:${approvalId}:${approval.userId}`] = JSON.stringify(approval);
    fields[`n:${approvalId}`] = String(partial.length);
  }
  return fields;
}

/** Inverse of `stepToHashFields`; accepts the flat [field, value, ...] array HGETALL returns from Lua. */
export function stepFromHashFields(fields: Record<string, string> | string[]): PendingStep | undefined {
  const record = Array.isArray(fields) ? pairsToRecord(fields) : fields;
  if (record.meta === undefined) return undefined;
  const meta = JSON.parse(record.meta) as Omit<PendingStep, 'decisions' | 'approvals' | 'phase' | 'revision' | 'cardTs'>;
  if (meta.schemaVersion !== PENDING_STEP_SCHEMA_VERSION) return undefined;
  const decisions: Record<string, Decision> = {};
  const approvals: Record<string, Decision[]> = {};
  for (const [field, value] of Object.entries(record)) {
    if (field.startsWith('d:')) decisions[field.slice(2)] = JSON.parse(value) as Decision;
    if (field.startsWith('a:')) {
      const approvalId = field.slice(2, field.lastIndexOf(':'));
      (approvals[approvalId] ??= []).push(JSON.parse(value) as Decision);
    }
  }
  for (const partial of Object.values(approvals)) partial.sort((left, right) => left.at - right.at);
  return {
    ...meta,
    decisions,
    ...(Object.keys(approvals).length > 0 ? { approvals } : {}),
    phase: record.phase as StepPhase,
    revision: Number(record.revision ?? 0),
    ...(record.card === undefined ? {} : { cardTs: record.card }),
  };
}

function pairsToRecord(pairs: string[]): Record<string, string> {
  const record: Record<string, string> = {};
  for (let index = 0; index + 1 < pairs.length; index += 2) record[pairs[index]!] = pairs[index + 1]!;
  return record;
}
