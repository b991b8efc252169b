import type { types } from '@slack/bolt';
import { SLACK_LIMITS } from '../blocks/limits.js';
import type { Variant } from './field-presence.js';
import type { FieldControl, FormField } from './form-field.js';
import type { Primitive } from './schema-shape.js';
import { canonicalDateTimeSeconds, compilePattern, decimalString, isCalendarDate, isEmail, isUrl } from './validate-value.js';

type ElementWithoutActionId = DistributiveOmit<types.InputBlockElement, 'action_id'>;
type DistributiveOmit<Type, Key extends PropertyKey> = Type extends unknown ? Omit<Type, Key> : never;

/** Either the element that holds the value (without its action id), or why no element can. */
export type ElementChoice = { variant: Variant; element: ElementWithoutActionId } | { unfit: string };

export const NONE_OPTION_VALUE = 'none';
const TEXT_MAX_LENGTH = SLACK_LIMITS.plainTextInputMaxLength;
/** Longer single values read better in a box that wraps. */
const MULTILINE_FROM_LENGTH = 100;
/**
 * Control characters and unpaired surrogates: Slack's text boxes would drop or change them, so a
 * string holding them is edited as a JSON string, whose escapes survive.
 */
const CHARACTERS_SLACK_CHANGES = /[\u0000-\u0008\u000B-\u001F\u007F]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * The Slack element for a field, prefilled with `prefill`. Values the natural element cannot hold
 * exactly (an invalid email, a date-time with an offset, a number in exponent form, a wrong type)
 * fall back to a text or JSON input that shows them verbatim, so nothing changes unless the
 * approver changes it.
 */
export function chooseElement(field: FormField, prefill: { value: unknown } | undefined): ElementChoice {
  const control = field.control;
  switch (control.kind) {
    case 'text':
      return textElement(control, prefill, demandsInput(field));
    case 'number':
      return numberElement(control, prefill);
    case 'boolean':
      return booleanElement(field, prefill);
    case 'choice':
      return choiceElement(field, control, prefill);
    case 'multi-choice':
      return multiChoiceElement(control, prefill);
    case 'list':
      return listElement(control, prefill);
    case 'json':
    case 'rest':
      return jsonElement(prefill);
    case 'group':
      return { unfit: 'is a group' };
  }
}

/**
 * Whether Slack should refuse to submit the input empty. Only for values that have no empty form:
 * a required string without `minLength` accepts `""`, a checkbox unchecked means `false`.
 */
export function demandsInput(field: FormField): boolean {
  if (!field.required || field.nullable || field.insideOptionalObject) return false;
  const control = field.control;
  switch (control.kind) {
    case 'text':
      return control.format !== 'plain' || (control.rules.minLength ?? 0) >= 1;
    case 'list':
    case 'multi-choice':
      return (control.minItems ?? 0) >= 1;
    case 'boolean':
    case 'rest':
    case 'group':
      return false;
    default:
      return true;
  }
}

/** How an enum member reads on a menu; blank strings are quoted so the option is visible. */
export function optionText(option: Primitive): string {
  return typeof option === 'string' && option.trim() !== '' ? option : JSON.stringify(option);
}

/** Optional and nullable menus get a "(none)" choice: Slack radio buttons cannot be unselected. */
export function offersNone(field: Pick<FormField, 'required' | 'nullable' | 'insideOptionalObject'>): boolean {
  return !field.required || field.nullable || field.insideOptionalObject;
}

export function jsonText(value: unknown): string | undefined {
  try {
    const pretty = JSON.stringify(value, null, 2);
    if (pretty === undefined) return undefined;
    if (pretty.length <= TEXT_MAX_LENGTH) return pretty;
    const compact = JSON.stringify(value);
    return compact.length <= TEXT_MAX_LENGTH ? compact : undefined;
  } catch {
    return undefined;
  }
}

function jsonElement(prefill: { value: unknown } | undefined): ElementChoice {
  const text = prefill === undefined ? undefined : jsonText(prefill.value);
  if (prefill !== undefined && text === undefined) return { unfit: unfitReason(prefill.value) };
  return { variant: 'json', element: { type: 'plain_text_input', multiline: true, max_length: TEXT_MAX_LENGTH, ...(text ? { initial_value: text } : {}) } };
}

function textElement(control: Extract<FieldControl, { kind: 'text' }>, prefill: { value: unknown } | undefined, required: boolean): ElementChoice {
  let value: string | undefined;
  if (prefill !== undefined) {
    if (typeof prefill.value !== 'string' || CHARACTERS_SLACK_CHANGES.test(prefill.value)) return jsonElement(prefill);
    if (prefill.value.length > TEXT_MAX_LENGTH) return { unfit: unfitReason(prefill.value) };
    value = prefill.value;
  }
  const fallback = (): ElementChoice => ({ variant: 'text', element: plainTextElement({ value, multiline: false, rules: {}, required }) });
  switch (control.format) {
    case 'email':
      if (value !== undefined && !isEmail(value)) return fallback();
      return { variant: 'widget', element: { type: 'email_text_input', ...(value ? { initial_value: value } : {}) } };
    case 'url':
      if (value !== undefined && !isUrl(value)) return fallback();
      return { variant: 'widget', element: { type: 'url_text_input', ...(value ? { initial_value: value } : {}) } };
    case 'date':
      if (value !== undefined && !isCalendarDate(value)) return fallback();
      return { variant: 'widget', element: { type: 'datepicker', ...(value ? { initial_date: value } : {}) } };
    case 'date-time': {
      const seconds = value === undefined ? undefined : canonicalDateTimeSeconds(value);
      if (value !== undefined && seconds === undefined) return fallback();
      return { variant: 'widget', element: { type: 'datetimepicker', ...(seconds !== undefined ? { initial_date_time: seconds } : {}) } };
    }
    case 'time': {
      const variant = timeVariant(control.rules.pattern, value);
      if (variant === undefined) return fallback();
      return { variant, element: { type: 'timepicker', ...(value ? { initial_time: value.slice(0, 5) } : {}) } };
    }
    case 'plain':
      return { variant: 'widget', element: plainTextElement({ value, multiline: control.multiline, rules: control.rules, required }) };
  }
}

/**
 * A timepicker answers `HH:mm`. Values written as `HH:mm` come back as `HH:mm`, values written as
 * `HH:mm:00` come back with `:00`; with no value, `HH:mm:ss` (JSON Schema's `time` has seconds)
 * unless the schema's pattern only accepts `HH:mm`. Seconds other than `:00`, fractions and
 * offsets do not fit a picker: undefined.
 */
function timeVariant(pattern: string | undefined, value: string | undefined): Variant | undefined {
  if (value !== undefined) {
    if (/^([01]\d|2[0-3]):[0-5]\d$/.test(value)) return 'widget';
    if (/^([01]\d|2[0-3]):[0-5]\d:00$/.test(value)) return 'seconds';
    return undefined;
  }
  const compiled = pattern === undefined ? undefined : compilePattern(pattern);
  return compiled !== undefined && compiled.test('12:34') && !compiled.test('12:34:00') ? 'widget' : 'seconds';
}

function plainTextElement({ value, multiline, rules, required }: { value: string | undefined; multiline: boolean; rules: { minLength?: number; maxLength?: number }; required: boolean }): ElementWithoutActionId {
  const length = value?.length ?? 0;
  // Never below the value already there: Slack would refuse to open a form it cannot submit.
  const maxLength = Math.min(TEXT_MAX_LENGTH, Math.max(rules.maxLength ?? TEXT_MAX_LENGTH, length, 1));
  // Slack checks `min_length` even on an empty optional input, so only required ones get it.
  const minLength = required && rules.minLength !== undefined && rules.minLength <= maxLength && length >= rules.minLength ? rules.minLength : undefined;
  return {
    type: 'plain_text_input',
    multiline: multiline || (value !== undefined && (value.includes('\n') || value.length > MULTILINE_FROM_LENGTH)),
    max_length: maxLength,
    ...(minLength !== undefined && minLength > 0 ? { min_length: minLength } : {}),
    ...(value ? { initial_value: value } : {}),
  };
}

function numberElement(control: Extract<FieldControl, { kind: 'number' }>, prefill: { value: unknown } | undefined): ElementChoice {
  let value: number | undefined;
  if (prefill !== undefined) {
    if (typeof prefill.value !== 'number' || !Number.isFinite(prefill.value)) return jsonElement(prefill);
    value = prefill.value;
  }
  const { integer, minimum, maximum } = control.rules;
  const text = value === undefined ? undefined : decimalString(value);
  if (value !== undefined && (text === undefined || (integer && !Number.isInteger(value)))) {
    return { variant: 'text', element: { type: 'plain_text_input', initial_value: String(value), max_length: TEXT_MAX_LENGTH } };
  }
  // Bounds the value already breaks are left to the parser: Slack may refuse such a form.
  const bound = (limit: number | undefined, holds: boolean): string | undefined =>
    limit !== undefined && holds && (!integer || Number.isInteger(limit)) ? decimalString(limit) : undefined;
  const minValue = bound(minimum, value === undefined || minimum === undefined || value >= minimum);
  const maxValue = bound(maximum, value === undefined || maximum === undefined || value <= maximum);
  return {
    variant: 'widget',
    element: {
      type: 'number_input',
      is_decimal_allowed: !integer,
      ...(text !== undefined ? { initial_value: text } : {}),
      ...(minValue !== undefined ? { min_value: minValue } : {}),
      ...(maxValue !== undefined ? { max_value: maxValue } : {}),
    },
  };
}

function booleanElement(field: FormField, prefill: { value: unknown } | undefined): ElementChoice {
  const value = prefill?.value;
  if (prefill !== undefined && typeof value !== 'boolean' && !(value === null && field.nullable)) return jsonElement(prefill);
  if (field.nullable) {
    // A checkbox has no third state, so a nullable boolean is a choice of three.
    const options = [option('Yes', 'true'), option('No', 'false'), option('(none)', NONE_OPTION_VALUE)];
    const initial = value === true ? options[0] : value === false ? options[1] : value === null ? options[2] : undefined;
    return { variant: 'widget', element: { type: 'radio_buttons', options, ...(initial ? { initial_option: initial } : {}) } };
  }
  const checked = option('Yes', 'true');
  return { variant: 'widget', element: { type: 'checkboxes', options: [checked], ...(value === true ? { initial_options: [checked] } : {}) } };
}

function choiceElement(field: FormField, control: Extract<FieldControl, { kind: 'choice' }>, prefill: { value: unknown } | undefined): ElementChoice {
  const value = prefill?.value;
  const allStrings = control.options.every((item) => typeof item === 'string');
  const asText = (): ElementChoice =>
    typeof value === 'string' && allStrings && !CHARACTERS_SLACK_CHANGES.test(value) && !value.includes('\n') && value.length <= TEXT_MAX_LENGTH
      ? { variant: 'text', element: { type: 'plain_text_input', max_length: TEXT_MAX_LENGTH, ...(value ? { initial_value: value } : {}) } }
      : jsonElement(prefill);
  if (control.widget === 'text_input') return prefill === undefined ? { variant: 'text', element: { type: 'plain_text_input', max_length: TEXT_MAX_LENGTH } } : asText();
  const options = control.options.map((item, index) => option(optionText(item), String(index)));
  if (offersNone(field)) options.push(option('(none)', NONE_OPTION_VALUE));
  let initial: types.PlainTextOption | undefined;
  if (prefill !== undefined) {
    const index = control.options.findIndex((item) => item === value);
    if (index >= 0) initial = options[index];
    else if (value === null && offersNone(field)) initial = options.at(-1);
    else return asText();
  }
  return { variant: 'widget', element: { type: control.widget, options, ...(initial ? { initial_option: initial } : {}) } };
}

function multiChoiceElement(control: Extract<FieldControl, { kind: 'multi-choice' }>, prefill: { value: unknown } | undefined): ElementChoice {
  const value = prefill?.value;
  const options = control.options.map((item, index) => option(optionText(item), String(index)));
  let indexes: number[] = [];
  if (prefill !== undefined) {
    if (!Array.isArray(value)) return jsonElement(prefill);
    indexes = value.map((item) => control.options.findIndex((candidate) => candidate === item));
    // Menus hold each option once, in option order: anything else is shown as JSON to keep it exact.
    const exact = indexes.every((index, position) => index >= 0 && (position === 0 || index > (indexes[position - 1] ?? -1)));
    if (!exact) return jsonElement(prefill);
  }
  const initial = indexes.flatMap((index) => (options[index] ? [options[index]] : []));
  const initialOptions = initial.length > 0 ? { initial_options: initial } : {};
  if (control.widget === 'checkboxes') return { variant: 'widget', element: { type: 'checkboxes', options, ...initialOptions } };
  const maxSelected = control.maxItems !== undefined && control.maxItems >= 1 && initial.length <= control.maxItems ? { max_selected_items: control.maxItems } : {};
  return { variant: 'widget', element: { type: 'multi_static_select', options, ...initialOptions, ...maxSelected } };
}

function listElement(control: Extract<FieldControl, { kind: 'list' }>, prefill: { value: unknown } | undefined): ElementChoice {
  const value = prefill?.value;
  let text: string | undefined;
  if (prefill !== undefined) {
    if (!Array.isArray(value) || !value.every((item) => fitsOnALine(item, control.item.kind))) return jsonElement(prefill);
    text = value.map((item) => (typeof item === 'number' ? String(item) : (item as string))).join('\n');
    if (text.length > TEXT_MAX_LENGTH) return jsonElement(prefill);
  }
  return {
    variant: 'widget',
    element: {
      type: 'plain_text_input',
      multiline: true,
      max_length: TEXT_MAX_LENGTH,
      placeholder: { type: 'plain_text', text: 'One per line' },
      ...(text ? { initial_value: text } : {}),
    },
  };
}

/** Lines are trimmed and blank ones skipped when read back, so only items that survive that fit. */
function fitsOnALine(item: unknown, kind: 'string' | 'number'): boolean {
  if (kind === 'number') return typeof item === 'number' && Number.isFinite(item) && !Object.is(item, -0);
  return typeof item === 'string' && item !== '' && item.trim() === item && !/[\n\r]/.test(item) && !CHARACTERS_SLACK_CHANGES.test(item);
}

function option(text: string, value: string): types.PlainTextOption {
  return { text: { type: 'plain_text', text }, value };
}

function unfitReason(value: unknown): string {
  let length: number | undefined;
  try {
    length = typeof value === 'string' ? value.length : JSON.stringify(value)?.length;
  } catch {
    length = undefined;
  }
  return length === undefined ? 'cannot be shown here' : `is too long to edit here (${length.toLocaleString('en-US')} characters)`;
}
