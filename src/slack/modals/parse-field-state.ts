import { truncateText } from '../blocks/limits.js';
import { NONE_OPTION_VALUE } from './choice-element.js';
import { inexactNumber, parseJsonExactly } from './exact-numbers.js';
import { decodeActionId, presenceOf, type Presence, type Variant } from './field-presence.js';
import type { ShownDefault } from './shown-default.js';
import { textFormatOf, type FieldControl, type FormField } from './form-field.js';
import { isRecord } from './json-schema.js';
import { formatDateTime, parseDecimal, validateItemCount, validateNumber, validateText } from './validate-value.js';

/** One entry of `view.state.values[blockId]`, as Slack sends it (see `ViewStateValue` in Bolt). */
export interface SlackStateValue {
  type?: string;
  value?: string | null;
  selected_option?: { value: string } | null;
  selected_options?: readonly { value: string }[];
  selected_date?: string | null;
  selected_time?: string | null;
  selected_date_time?: number | null;
}

export type FieldOutcome = { kind: 'omit' } | { kind: 'value'; value: unknown } | { kind: 'error'; message: string };

/**
 * `blank` means the approver left this input as it was shown, with nothing in it that was not there
 * by default: an object whose fields are all blank may be left out as a whole, and its "Required"
 * errors with it. An input that showed a value and was emptied is the approver's change, never
 * blank, whatever it gives (`null`, left out): else the object around it, left out, would let a
 * default bring back the value the approver removed.
 * `cleared` means the input is empty as submitted and gives nothing of its own: emptied, or showing
 * nothing and left so. An object all of whose inputs are cleared, one of them by the approver, was cleared
 * on screen: it may be left out or `null` as a whole, but only where no default of its own brings it back
 * (see `FormReader`; an untouched `{}` or `null` the model sent for an object inside it is content, not cleared).
 */
export interface FieldResult {
  blank: boolean;
  cleared?: boolean;
  outcome: FieldOutcome;
}

type Reading = { empty: true } | { empty?: false; value: unknown } | { empty?: false; error: string };

const CHOICES_IN_MESSAGE_LENGTH = 120;
/** What a timepicker's `HH:mm` gets for the spelling its field was shown in (see `Variant`). */
const TIMEPICKER_SUFFIXES: Partial<Record<Variant, string>> = { seconds: ':00', utc: ':00Z' };
const JSON_ERROR_LENGTH = 150;

/**
 * Reads one input's state back into a typed value, checking what Slack does not. `shown`: the
 * default the input was prefilled with if the model left the property out (`shownDefault`, for the
 * presences its action id carries).
 */
export function parseFieldState({ field, actionId, state, shown }: { field: FormField; actionId: string; state: SlackStateValue; shown: ShownDefault | undefined }): FieldResult {
  const { variant, presences } = decodeActionId(actionId);
  const presence = presences.at(-1) ?? 'set';
  const reading = variant === 'json' ? readJson(field, state) : readWidget(field, variant, state);
  if ('error' in reading) return { blank: false, outcome: { kind: 'error', message: reading.error } };
  // The model left the property out, so the input was prefilled with a default (if any).
  const prefilled = presence === 'absent' ? shown : undefined;
  const asIfProposed = prefilled === undefined ? presence : presenceOf(prefilled.value, { present: true });
  const result: FieldResult = reading.empty ? clearedField(field, asIfProposed) : { blank: false, outcome: value(reading.value) };
  return prefilled === undefined ? result : fromShownDefault(field, prefilled, result);
}

/**
 * An input prefilled with the default of a property the model left out (its own, or what the
 * default of an object left out around it holds for it) reads as if the model had proposed that
 * default: whatever the approver leaves in it comes back explicitly (an unticked
 * checkbox `false`, an emptied multi-select or list `[]`, an emptied nullable input `null`), so the
 * default, applied again after the form, can never undo what the approver chose. Only a result
 * equal to the default (the input submitted as shown) stays left out, which means the same thing;
 * a required property keeps it explicitly, should its object be kept.
 * Inputs with no empty value of their own (text, numbers, pickers, menus) still mean "not set"
 * when emptied, as for a value the model did propose: left out, so the default their hint names
 * applies.
 */
function fromShownDefault(field: FormField, shown: ShownDefault, result: FieldResult): FieldResult {
  // Anything but the default shown is the approver's change, already not blank (an emptied input too: see `clearedField`).
  if (result.outcome.kind !== 'value' || !sameJson(result.outcome.value, shown.value)) return result;
  // An object's default applies only to the object left out as a whole: kept, for when another of its inputs changes.
  if (shown.fromObject) return { blank: true, outcome: result.outcome };
  return { blank: true, outcome: field.required ? result.outcome : { kind: 'omit' } };
}

/**
 * What an input left empty means. The rule, by how the property appeared in the original value:
 * - it held `null` (and may): `null` again;
 * - it held `""`: `""` again (the box could not show the difference);
 * - it held a value: `null` if nullable, else left out if optional, else `""`/"Required";
 * - it was missing (or the form was opened empty): left out if optional, else `null` if nullable,
 *   else `""`/"Required".
 * Checkboxes, multi-selects and one-per-line lists are never "cleared": unchecked is `false` and
 * nothing selected or listed is `[]` (or `null`, if it was), except for an optional property the
 * original value did not have, which stays absent. (An input `parseFieldState` showed a default in
 * is read as if the original value held that default: see `fromShownDefault`.)
 */
export function clearedField(field: FormField, presence: Presence): FieldResult {
  const control = field.control;
  const blankWhen = (...presences: Presence[]): boolean => presences.includes(presence);
  if ((control.kind === 'boolean' && !field.nullable) || control.kind === 'list' || control.kind === 'multi-choice') {
    if (presence === 'null' && field.nullable) return { blank: false, outcome: value(null) };
    if (presence === 'absent' && !field.required) return { blank: true, cleared: true, outcome: { kind: 'omit' } };
    const empty = control.kind === 'boolean' ? false : [];
    return { blank: blankWhen('fresh', 'absent'), outcome: checked(empty, validateControl(control, empty)) };
  }
  if (control.kind === 'rest') return { blank: true, outcome: value({}) };
  if (presence === 'null' && field.nullable) return { blank: false, outcome: value(null) };
  if (presence === 'empty' && control.kind === 'text') return { blank: false, outcome: checked('', validateControl(control, '')) };
  if (presence === 'null' || presence === 'empty' || presence === 'set') {
    // Unless it held `null`, it showed a value (the model's, or a default read as proposed; `false` is "No", `[]` JSON
    // text): emptying it is the approver's change.
    const read = { blank: presence === 'null', cleared: true };
    if (field.nullable) return { ...read, outcome: value(null) };
    if (!field.required) return { ...read, outcome: { kind: 'omit' } };
    return { ...read, outcome: requiredEmpty(control) };
  }
  if (!field.required) return { blank: true, cleared: true, outcome: { kind: 'omit' } };
  if (field.nullable) return { blank: true, cleared: true, outcome: value(null) };
  return { blank: true, cleared: true, outcome: requiredEmpty(control) };
}

/** A required string with no `minLength` may be `""`; anything else left empty is missing. */
function requiredEmpty(control: FieldControl): FieldOutcome {
  if (control.kind === 'text' && control.format === 'plain') return checked('', validateControl(control, ''));
  return { kind: 'error', message: 'Required' };
}

function readWidget(field: FormField, variant: Variant, state: SlackStateValue): Reading {
  const control = field.control;
  switch (control.kind) {
    case 'text': {
      const text = readText(state, variant);
      return text === undefined ? { empty: true } : validated(text, validateControl(control, text));
    }
    case 'number': {
      const text = state.value;
      if (typeof text !== 'string' || text.trim() === '') return { empty: true };
      const number = parseDecimal(text);
      if (number === undefined) return { error: 'Must be a number' };
      return validated(number, inexactNumber(text, number) ?? validateNumber(number, control.rules));
    }
    case 'boolean': {
      if (state.selected_options !== undefined) return state.selected_options.some((option) => option.value === 'true') ? { value: true } : { empty: true };
      const selected = state.selected_option?.value;
      if (selected === undefined || selected === NONE_OPTION_VALUE) return { empty: true };
      return { value: selected === 'true' };
    }
    case 'choice': {
      if (control.widget === 'text_input' || variant === 'text') {
        const text = typeof state.value === 'string' ? state.value : '';
        if (text === '') return { empty: true };
        const match = control.options.find((option) => option === text) ?? control.options.find((option) => option === text.trim());
        return match === undefined ? { error: `Must be one of: ${describeChoices(control.options)}` } : { value: match };
      }
      const selected = state.selected_option?.value;
      if (selected === undefined || selected === NONE_OPTION_VALUE) return { empty: true };
      const index = Number(selected);
      const chosen = Number.isInteger(index) ? control.options[index] : undefined;
      return chosen === undefined ? { error: 'Choose one of the options' } : { value: chosen };
    }
    case 'multi-choice': {
      const indexes = (state.selected_options ?? []).map((option) => Number(option.value));
      if (indexes.length === 0) return { empty: true };
      if (!indexes.every((index) => Number.isInteger(index) && control.options[index] !== undefined)) return { error: 'Choose from the options' };
      // Options come back in the order they were clicked; the value keeps the schema's order.
      const values = [...new Set(indexes)].sort((left, right) => left - right).map((index) => control.options[index]);
      return validated(values, validateControl(control, values));
    }
    case 'list': {
      const lines = (typeof state.value === 'string' ? state.value : '')
        .split(/\r?\n/)
        .map((line) => line.trim())
        .filter((line) => line !== '');
      if (lines.length === 0) return { empty: true };
      const items: unknown[] = [];
      for (const [index, line] of lines.entries()) {
        const item = control.item.kind === 'number' ? parseDecimal(line) : line;
        if (item === undefined) return { error: `Line ${index + 1}: must be a number` };
        const inexact = typeof item === 'number' ? inexactNumber(line, item) : undefined;
        if (inexact !== undefined) return { error: `Line ${index + 1}: ${inexact.charAt(0).toLowerCase()}${inexact.slice(1)}` };
        items.push(item);
      }
      return validated(items, validateControl(control, items));
    }
    case 'json':
    case 'rest':
    case 'group':
      return readJson(field, state);
  }
}

function readText(state: SlackStateValue, variant: Variant): string | undefined {
  switch (state.type) {
    case 'datepicker':
      return state.selected_date ?? undefined;
    case 'timepicker':
      return typeof state.selected_time === 'string' ? `${state.selected_time}${TIMEPICKER_SUFFIXES[variant] ?? ''}` : undefined;
    case 'datetimepicker':
      return typeof state.selected_date_time === 'number' ? formatDateTime(state.selected_date_time) : undefined;
    default:
      // Slack sends null for an empty box, never "".
      return typeof state.value === 'string' && state.value !== '' ? state.value : undefined;
  }
}

function readJson(field: FormField, state: SlackStateValue): Reading {
  const text = typeof state.value === 'string' ? state.value : '';
  if (text.trim() === '') return field.control.kind === 'rest' ? validated({}, validateControl(field.control, {})) : { empty: true };
  let parsed: unknown;
  try {
    const read = parseJsonExactly(text);
    if (read.inexact !== undefined) return { error: truncateText(read.inexact, JSON_ERROR_LENGTH) };
    parsed = read.value;
  } catch (error) {
    return { error: truncateText(`Not valid JSON: ${error instanceof Error ? error.message : String(error)}`, JSON_ERROR_LENGTH) };
  }
  if (parsed === null) return field.nullable || field.control.kind === 'json' ? { value: null } : { error: 'Must not be null' };
  return validated(parsed, validateControl(field.control, parsed));
}

/** Type and rule checks shared by widgets and JSON text. */
function validateControl(control: FieldControl, candidate: unknown): string | undefined {
  switch (control.kind) {
    case 'text':
      if (typeof candidate !== 'string') return 'Must be text (a JSON string)';
      return validateText(candidate, control.rules, control.format);
    case 'number':
      if (typeof candidate !== 'number') return 'Must be a number';
      return validateNumber(candidate, control.rules);
    case 'boolean':
      return typeof candidate === 'boolean' ? undefined : 'Must be true or false';
    case 'choice':
      return control.options.includes(candidate as never) ? undefined : `Must be one of: ${describeChoices(control.options)}`;
    case 'multi-choice':
      if (!Array.isArray(candidate)) return 'Must be a JSON array';
      if (!candidate.every((item) => control.options.includes(item as never))) return `Each item must be one of: ${describeChoices(control.options)}`;
      return validateItemCount(candidate.length, control);
    case 'list':
      if (!Array.isArray(candidate)) return 'Must be a JSON array';
      return validateListItems(control, candidate) ?? validateItemCount(candidate.length, control);
    case 'rest':
      return validateRest(control, candidate);
    case 'json':
    case 'group':
      return undefined;
  }
}

function validateListItems(control: Extract<FieldControl, { kind: 'list' }>, items: readonly unknown[]): string | undefined {
  for (const [index, item] of items.entries()) {
    const problem =
      control.item.kind === 'number'
        ? typeof item === 'number'
          ? validateNumber(item, control.item)
          : 'must be a number'
        : typeof item !== 'string'
          ? 'must be text'
          : control.allowed !== undefined && !control.allowed.includes(item)
            ? `must be one of: ${describeChoices(control.allowed)}`
            : validateText(item, control.item, textFormatOf(control.item.format, control.timeFormat));
    if (problem !== undefined) return `Item ${index + 1}: ${problem.charAt(0).toLowerCase()}${problem.slice(1)}`;
  }
  return undefined;
}

/** The JSON object for the fields that did not fit: only those names, and every required one. */
function validateRest(control: Extract<FieldControl, { kind: 'rest' }>, candidate: unknown): string | undefined {
  if (!isRecord(candidate)) return 'Must be a JSON object';
  const known = new Set(control.properties.map((property) => property.name));
  const unknown = Object.keys(candidate).filter((name) => !known.has(name));
  if (unknown.length > 0) return truncateText(`Unknown ${unknown.length === 1 ? 'field' : 'fields'}: ${unknown.join(', ')}`, CHOICES_IN_MESSAGE_LENGTH);
  const missing = control.properties.filter((property) => property.required && !Object.hasOwn(candidate, property.name)).map((property) => property.name);
  if (missing.length > 0) return truncateText(`Missing required ${missing.length === 1 ? 'field' : 'fields'}: ${missing.join(', ')}`, CHOICES_IN_MESSAGE_LENGTH);
  return undefined;
}

function describeChoices(options: readonly unknown[]): string {
  return truncateText(options.map((option) => (typeof option === 'string' ? option : JSON.stringify(option))).join(', '), CHOICES_IN_MESSAGE_LENGTH);
}

function validated(candidate: unknown, problem: string | undefined): Reading {
  return problem === undefined ? { value: candidate } : { error: problem };
}

function checked(candidate: unknown, problem: string | undefined): FieldOutcome {
  return problem === undefined ? value(candidate) : { kind: 'error', message: problem };
}

function value(candidate: unknown): FieldOutcome {
  return { kind: 'value', value: candidate };
}

/** Defaults are JSON, and so is everything an input produces. */
function sameJson(left: unknown, right: unknown): boolean {
  if (Object.is(left, right)) return true;
  if (typeof left !== 'object' || typeof right !== 'object' || left === null || right === null) return false;
  if (Array.isArray(left) !== Array.isArray(right)) return false;
  const leftKeys = Object.keys(left);
  const rightKeys = Object.keys(right);
  if (leftKeys.length !== rightKeys.length) return false;
  return leftKeys.every(
    (key) => Object.hasOwn(right, key) && sameJson((left as Record<string, unknown>)[key], (right as Record<string, unknown>)[key]),
  );
}
