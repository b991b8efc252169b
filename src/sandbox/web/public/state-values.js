/**
 * `view.state.values` read from a rendered form, in exactly Slack's shapes: block_id → action_id →
 * `{ type, value }` (null when empty) | `selected_option` (null) | `selected_options` ([]) |
 * `selected_date` | `selected_time` (+ `timezone`) | `selected_date_time` (epoch seconds).
 */
import { localInputToSeconds } from './dates.js';
import { isRecord } from './escape.js';
import { actionIdOf, blockIdOf, optionsOf, reportedOption } from './text-object.js';

export function collectStateValues(formRoot, blocks) {
  const values = {};
  (Array.isArray(blocks) ? blocks : []).forEach((block, index) => {
    if (!isRecord(block) || block.type !== 'input' || !isRecord(block.element)) return;
    const control = formRoot.querySelector(`[data-block-index="${index}"] [data-control]`);
    const state = control ? readControl(control, block.element) : undefined;
    if (state !== undefined) values[blockIdOf(block, index)] = { [actionIdOf(block.element, index)]: state };
  });
  return values;
}

/** One element's state; undefined for elements the sandbox does not render as controls. */
export function readControl(control, element) {
  const type = element.type;
  const options = optionsOf(element);
  const chosen = (indexes) => indexes.map((index) => options[Number(index)]).filter(isRecord).map(reportedOption);
  switch (type) {
    case 'plain_text_input':
    case 'email_text_input':
    case 'url_text_input':
    case 'number_input':
      return { type, value: control.value === '' ? null : control.value };
    case 'static_select':
      return { type, selected_option: chosen(control.value === '' ? [] : [control.value])[0] ?? null };
    case 'multi_static_select':
      return { type, selected_options: chosen([...control.options].filter((option) => option.selected).map((option) => option.value)) };
    case 'radio_buttons':
      return { type, selected_option: chosen(checkedValues(control))[0] ?? null };
    case 'checkboxes':
      return { type, selected_options: chosen(checkedValues(control)) };
    case 'datepicker':
      return { type, selected_date: control.value || null };
    case 'timepicker':
      return { type, selected_time: control.value ? control.value.slice(0, 5) : null, ...(element.timezone ? { timezone: element.timezone } : {}) };
    case 'datetimepicker':
      return { type, selected_date_time: control.value ? localInputToSeconds(control.value) : null };
    default:
      return undefined;
  }
}

function checkedValues(control) {
  return [...control.querySelectorAll('input')].filter((input) => input.checked).map((input) => input.value);
}

/** What `block_actions` reports as the action's choice, for menus and pickers in messages. */
export function selectedForAction(state) {
  if (state === undefined) return undefined;
  for (const key of ['selected_option', 'selected_options', 'selected_date', 'selected_time', 'selected_date_time', 'value']) {
    if (key in state) return state[key];
  }
  return undefined;
}
