/**
 * The checks Slack's own client makes before it sends a `view_submission`: required inputs,
 * lengths, number ranges, email and URL formats, how many items a menu allows. Pure: blocks and
 * `state.values` in, block_id → message out.
 */
import { isRecord } from './escape.js';
import { actionIdOf, blockIdOf } from './text-object.js';

export function validateStateValues(blocks, values) {
  const errors = {};
  (Array.isArray(blocks) ? blocks : []).forEach((block, index) => {
    if (!isRecord(block) || block.type !== 'input' || !isRecord(block.element)) return;
    const blockId = blockIdOf(block, index);
    const state = values[blockId]?.[actionIdOf(block.element, index)];
    if (state === undefined) return;
    const problem = isEmpty(state) ? (block.optional === true ? undefined : 'Please complete this required field.') : checkElement(block.element, state);
    if (problem !== undefined) errors[blockId] = problem;
  });
  return errors;
}

function isEmpty(state) {
  if ('selected_options' in state) return state.selected_options.length === 0;
  const key = Object.keys(state).find((name) => name !== 'type' && name !== 'timezone');
  return key === undefined || state[key] === null;
}

function checkElement(element, state) {
  switch (element.type) {
    case 'plain_text_input': {
      const length = [...state.value].length;
      if (Number.isInteger(element.min_length) && length < element.min_length) return `Please enter at least ${element.min_length} characters.`;
      if (Number.isInteger(element.max_length) && length > element.max_length) return `Please enter no more than ${element.max_length} characters.`;
      return undefined;
    }
    case 'number_input':
      return checkNumber(element, state.value.trim());
    case 'email_text_input':
      return /^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(state.value) ? undefined : 'Please enter a valid email address.';
    case 'url_text_input':
      return /^https?:\/\/[^\s/$.?#][^\s]*$/i.test(state.value) ? undefined : 'Please enter a valid URL.';
    case 'multi_static_select':
      return Number.isInteger(element.max_selected_items) && state.selected_options.length > element.max_selected_items
        ? `Please select no more than ${element.max_selected_items} items.`
        : undefined;
    default:
      return undefined;
  }
}

function checkNumber(element, text) {
  const decimal = element.is_decimal_allowed === true;
  if (!(decimal ? /^-?(\d+\.?\d*|\.\d+)$/ : /^-?\d+$/).test(text)) return decimal ? 'Please enter a number.' : 'Please enter a whole number.';
  const number = Number(text);
  if (element.min_value !== undefined && number < Number(element.min_value)) return `Please enter a number of at least ${element.min_value}.`;
  if (element.max_value !== undefined && number > Number(element.max_value)) return `Please enter a number no greater than ${element.max_value}.`;
  return undefined;
}
