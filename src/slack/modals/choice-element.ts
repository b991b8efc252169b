import type { types } from '@slack/bolt';
import { editedAsJson, jsonElement, option, TEXT_MAX_LENGTH, type ElementChoice } from './element-basics.js';
import type { FieldControl, FormField } from './form-field.js';
import type { Primitive } from './schema-shape.js';

/** Options carry the enum member's index as their value; this one means "nothing chosen". */
export const NONE_OPTION_VALUE = 'none';

/** How an enum member reads on a menu; blank strings are quoted so the option is visible. */
export function optionText(option: Primitive): string {
  return typeof option === 'string' && option.trim() !== '' ? option : JSON.stringify(option);
}

/** Optional and nullable menus get a "(none)" choice: Slack radio buttons cannot be unselected. */
export function offersNone(field: Pick<FormField, 'required' | 'nullable' | 'insideOptionalObject'>): boolean {
  return !field.required || field.nullable || field.insideOptionalObject;
}

export function booleanElement(field: FormField, prefill: { value: unknown } | undefined): ElementChoice {
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

export function choiceElement(field: FormField, control: Extract<FieldControl, { kind: 'choice' }>, prefill: { value: unknown } | undefined): ElementChoice {
  const value = prefill?.value;
  const allStrings = control.options.every((item) => typeof item === 'string');
  const asText = (): ElementChoice =>
    allStrings && typeable(value) ? { variant: 'text', element: { type: 'plain_text_input', max_length: TEXT_MAX_LENGTH, initial_value: value } } : jsonElement(prefill);
  if (control.widget === 'text_input') {
    // A member the box cannot give back (`""`, a line break) could never be chosen: then the answer is JSON, which writes every member exactly.
    if (!control.options.every(typeable)) return jsonElement(prefill);
    return prefill === undefined ? { variant: 'text', element: { type: 'plain_text_input', max_length: TEXT_MAX_LENGTH } } : asText();
  }
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

/** A string a one-line text box shows and gives back as it is. */
function typeable(value: unknown): value is string {
  return typeof value === 'string' && value !== '' && !editedAsJson(value) && !value.includes('\n') && value.length <= TEXT_MAX_LENGTH;
}

export function multiChoiceElement(control: Extract<FieldControl, { kind: 'multi-choice' }>, prefill: { value: unknown } | undefined): ElementChoice {
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
