/**
 * A Slack modal form generated from a JSON Schema (a tool's input schema, or the answer schema of
 * `ask_user`), and the way back from `view.state.values` to a typed value.
 *
 * Choices this module makes where Slack leaves one:
 * - Block ids (`f:0`, `f:1`, …) depend on the schema alone. A submit handler can rebuild the form
 *   (with or without the value), call `buildSchemaFields({ schema })`, or pass `{ schema }` here.
 * - How each property appeared in the value the form was opened with (missing, `null`, empty,
 *   set) travels in its input's `action_id`, so an emptied input means the same without that
 *   value: see `clearedField` for the rule. In short, an emptied optional property is left out,
 *   one that held a value and may be null becomes `null`, and `""`, `[]`, `false` and `null`
 *   submitted unchanged stay as they were. A missing property is shown with its default and stays
 *   missing if submitted unchanged; changed, it comes back as the approver left it, explicitly (an
 *   unticked checkbox `false`, an emptied multi-select or list `[]`), so the default can never undo
 *   the approver's choice (see `fromShownDefault`). Inside an object left out that has a default of
 *   its own, inputs show what that default holds (see `shownDefault`), and once any of them changes,
 *   the others come back as shown. A form opened without any value returns defaults explicitly.
 * - Nothing is truncated. A value no input can hold exactly is shown another way (as text, or as
 *   JSON; a nested object's inputs give way to one JSON input when its value is not an object,
 *   see `showsGroupAsJson`), and one too long for any input (over 3,000 characters, or past the view's size) is
 *   replaced by a note and kept from the original value, which `parseSchemaForm` must then have.
 * - Time pickers answer `HH:mm`: a value written `HH:mm` comes back so; one written `HH:mm:00`,
 *   or a new one when the schema does not insist on `HH:mm`, comes back `HH:mm:ss`. For a
 *   validator that reads `time` as RFC 3339 (`timeFormat: 'full-time'`, ajv) the picker is in UTC
 *   and answers `HH:mm:00Z`; other spellings are edited as text and checked as ajv checks them.
 *   Date-time pickers answer in UTC as `2025-01-16T06:30:00Z`; other spellings are edited as text.
 */
import type { types } from '@slack/bolt';
import { FormReader, restValue } from './form-reader.js';
import { isGroup, type FormField, type TimeFormat } from './form-field.js';
import { presencesAlong, valueAt, type Presence } from './field-presence.js';
import type { JsonSchemaDefinition } from './json-schema.js';
import type { SlackStateValue } from './parse-field-state.js';
import { byteLength, minimumFieldBytes, renderField, renderKeptField } from './render-field.js';
import { buildSchemaFields } from './schema-fields.js';
import { shownDefault } from './shown-default.js';
import { extraPropertiesNotice } from './extra-properties.js';
import { groupAsJsonField, isBelowGroup, showsGroupAsJson } from './group-as-json.js';

export type { FormField, TimeFormat } from './form-field.js';
export type { JsonSchema, JsonSchemaDefinition } from './json-schema.js';
export { buildSchemaFields } from './schema-fields.js';

export interface SchemaForm {
  /** Every field, the form itself first for object schemas (a group with an empty path and no block). */
  fields: FormField[];
  /** Only the form's blocks (inputs, headings, notes); the caller wraps them in a modal. */
  blocks: types.KnownBlock[];
  /** Block ids of the input blocks in `blocks`: the only ids Slack accepts in `response_action: 'errors'`. */
  inputBlockIds: string[];
  /** The value the form was opened with; `parseSchemaForm` keeps from it what no input could hold. */
  initialValue?: unknown;
}

export type ParseResult = { ok: true; value: unknown } | { ok: false; errors: Record<string, string> };

/**
 * Bytes of form blocks; Slack refuses views over 250 kB, and the caller adds its own blocks, title
 * and metadata.
 */
const FORM_BYTE_LIMIT = 200_000;

/**
 * A Slack form for a JSON Schema, prefilled with `initialValue` (or with defaults where it has no
 * value). Rebuilding it from the same schema gives the same block ids, with or without a value.
 * `timeFormat`: how the validator the caller runs on the result reads `format: "time"`.
 */
export function buildSchemaForm({
  schema,
  initialValue,
  blockIdPrefix = 'f',
  timeFormat,
}: { schema: JsonSchemaDefinition; initialValue?: unknown; blockIdPrefix?: string; timeFormat?: TimeFormat }): SchemaForm {
  const fields = buildSchemaFields({ schema, blockIdPrefix, timeFormat });
  const shown = fieldsToShow(fields, initialValue);
  // Room is kept for every later field at its smallest, so one huge value cannot crowd out the rest.
  const minimumCosts = shown.map((field) => minimumFieldBytes(field));
  let reserved = minimumCosts.reduce((total, cost) => total + cost, 0);
  const notice = extraPropertiesNotice({ fields, initialValue, blockId: `${blockIdPrefix}:notice` });
  let used = notice === undefined ? 0 : byteLength(notice);
  const blocks: types.KnownBlock[] = [];
  for (const [index, field] of shown.entries()) {
    reserved -= minimumCosts[index] ?? 0;
    const presences = presencesAlong({ initialValue, path: field.path });
    let block = renderField({ field, presences, prefill: prefillFor({ fields, field, presences, initialValue }) });
    if (used + byteLength(block) + reserved > FORM_BYTE_LIMIT) block = renderKeptField({ field, reason: 'does not fit in one Slack form' });
    used += byteLength(block);
    blocks.push(block);
  }
  if (notice !== undefined) blocks.push(notice);
  const inputBlockIds = blocks.flatMap((block) => (block.type === 'input' && block.block_id !== undefined ? [block.block_id] : []));
  return { fields, blocks, inputBlockIds, ...(initialValue !== undefined ? { initialValue } : {}) };
}

/**
 * Reads a submitted form (`view.state.values`) back into a value of the schema's types.
 *
 * Pass the form (as built or rebuilt), its fields, or the schema (with the same `blockIdPrefix`).
 * Values no input could hold (see the "kept unchanged" notes) come from `initialValue`, which
 * defaults to the form's own; without it they are treated as cleared.
 *
 * Errors are keyed by input block id, ready for `ack({ response_action: 'errors', errors })`.
 * Full schema validation (zod, ajv) remains the caller's job.
 */
export function parseSchemaForm(
  options: ({ form: SchemaForm | readonly FormField[] } | { schema: JsonSchemaDefinition; blockIdPrefix?: string; timeFormat?: TimeFormat }) & {
    stateValues: Readonly<Record<string, Readonly<Record<string, SlackStateValue>>>>;
    initialValue?: unknown;
  },
): ParseResult {
  const fields =
    'form' in options
      ? isFieldList(options.form)
        ? options.form
        : options.form.fields
      : buildSchemaFields({ schema: options.schema, blockIdPrefix: options.blockIdPrefix, timeFormat: options.timeFormat });
  const initialValue = 'initialValue' in options ? options.initialValue : 'form' in options && !isFieldList(options.form) ? options.form.initialValue : undefined;
  const root = fields[0];
  if (root === undefined) return { ok: true, value: {} };
  const result = new FormReader(fields, options.stateValues, initialValue).read(root);
  if (Object.keys(result.errors).length > 0) return { ok: false, errors: result.errors };
  return { ok: true, value: result.outcome.kind === 'value' ? result.outcome.value : undefined };
}

/** The fields that get a block: all but the form's own group, and a group whose value is not an object as one JSON input. */
function fieldsToShow(fields: readonly FormField[], initialValue: unknown): FormField[] {
  const shown: FormField[] = [];
  let asJson: FormField | undefined;
  for (const field of fields) {
    if (field.path.length === 0 && isGroup(field)) continue;
    if (asJson !== undefined && isBelowGroup(asJson, field)) continue;
    asJson = showsGroupAsJson(field, initialValue) ? field : undefined;
    shown.push(asJson === undefined ? field : groupAsJsonField(field));
  }
  return shown;
}

function isFieldList(form: SchemaForm | readonly FormField[]): form is readonly FormField[] {
  return Array.isArray(form);
}

/**
 * What to put in an input. A missing property shows its default (left out again if submitted
 * unchanged), or what the default of an object left out around it holds for it (see
 * `shownDefault`); `null` shows as nothing, except on menus that have a "(none)" choice and as JSON
 * text. A `null` default (pydantic's `note: str | None = None`) shows as the model's own `null`
 * would: an empty text box or picker, not a JSON box holding `null` that refuses plain text.
 */
function prefillFor({
  fields,
  field,
  presences,
  initialValue,
}: { fields: readonly FormField[]; field: FormField; presences: readonly Presence[]; initialValue: unknown }): { value: unknown } | undefined {
  const presence = presences.at(-1);
  if (field.control.kind === 'rest') return restValue(field, initialValue);
  if (presence === 'set' || presence === 'empty') return valueAt(initialValue, field.path);
  const shown = presence === 'null' ? { value: null } : shownDefault({ fields, field, presences });
  if (shown === undefined || shown.value !== null) return shown;
  // JSON text can show `null` itself, so it is seen and kept, whatever the schema says about null.
  if (field.control.kind === 'json') return { value: null };
  return field.nullable && (field.control.kind === 'choice' || field.control.kind === 'boolean') ? { value: null } : undefined;
}
