import { booleanElement, choiceElement, multiChoiceElement } from './choice-element.js';
import { editedAsJson, jsonElement, TEXT_MAX_LENGTH, unfitReason, type ElementChoice, type ElementWithoutActionId } from './element-basics.js';
import type { Variant } from './field-presence.js';
import type { FieldControl, FormField } from './form-field.js';
import { canonicalDateTimeSeconds, compilePattern, decimalString, isCalendarDate, isEmail, isUrl } from './validate-value.js';

/** Longer single values read better in a box that wraps. */
const MULTILINE_FROM_LENGTH = 100;
/** The one spelling of a full-time that a UTC timepicker gives back exactly. */
const UTC_WHOLE_MINUTE = /^([01]\d|2[0-3]):[0-5]\d:00Z$/;

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

function textElement(control: Extract<FieldControl, { kind: 'text' }>, prefill: { value: unknown } | undefined, required: boolean): ElementChoice {
  let value: string | undefined;
  if (prefill !== undefined) {
    if (typeof prefill.value !== 'string' || editedAsJson(prefill.value)) return jsonElement(prefill);
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
    case 'full-time':
      // The picker answers `HH:mm` in the zone it names; in UTC, `:00Z` makes it a full-time.
      if (value !== undefined && !UTC_WHOLE_MINUTE.test(value)) return fallback();
      return { variant: 'utc', element: { type: 'timepicker', timezone: 'UTC', ...(value ? { initial_time: value.slice(0, 5) } : {}) } };
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
  // Slack may apply `min_length` to an optional input left empty; only required ones get it, and
  // the parser checks `minLength` on the rest.
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

function listElement(control: Extract<FieldControl, { kind: 'list' }>, prefill: { value: unknown } | undefined): ElementChoice {
  // An enum member a line cannot hold (` 0`, `a\nb`, `""`) could never be chosen, or would come back
  // as another string: such an enum is edited as JSON, where every member is written exactly.
  if (control.allowed !== undefined && !control.allowed.every((member) => fitsOnALine(member, 'string'))) return jsonElement(prefill);
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
  return typeof item === 'string' && item !== '' && item.trim() === item && !/[\n\r]/.test(item) && !editedAsJson(item);
}

