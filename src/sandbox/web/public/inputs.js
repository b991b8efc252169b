/**
 * Form controls for Block Kit input elements, in modals and (dispatching an action on change) in
 * messages. Option values in the DOM are indexes into `optionsOf(element)`, so the option object
 * reported back is exactly the one the bot sent.
 */
import { secondsToLocalInput } from './dates.js';
import { escapeHtml, isRecord } from './escape.js';
import { optionsOf, plainTextOf, sameOption, textObjectHtml } from './text-object.js';

export const INPUT_ELEMENT_TYPES = new Set([
  'plain_text_input', 'number_input', 'email_text_input', 'url_text_input', 'datepicker', 'timepicker', 'datetimepicker',
  'static_select', 'multi_static_select', 'radio_buttons', 'checkboxes',
]);

const TEXT_TYPES = { plain_text_input: 'text', email_text_input: 'email', url_text_input: 'url' };

/** `where`: `{ id, attributes }` — the control's DOM id and extra attributes (already escaped). */
export function renderControl(element, where, ctx) {
  const common = `id="${escapeHtml(where.id)}" data-control="${escapeHtml(element.type)}"${where.attributes ?? ''}`;
  const placeholder = isRecord(element.placeholder) ? ` placeholder="${escapeHtml(plainTextOf(element.placeholder))}"` : '';
  const text = (name) => (typeof element[name] === 'string' ? element[name] : '');
  const length = ['max_length', 'min_length'].map((name) => (Number.isInteger(element[name]) ? ` ${name.replace('_', '')}="${element[name]}"` : '')).join('');
  switch (element.type) {
    case 'plain_text_input':
    case 'email_text_input':
    case 'url_text_input':
      if (element.multiline === true) return `<textarea class="bk-control bk-textarea" rows="4" ${common}${placeholder}${length}>${textareaContent(text('initial_value'))}</textarea>`;
      return `<input type="${TEXT_TYPES[element.type]}" class="bk-control" ${common}${placeholder}${length} value="${escapeHtml(text('initial_value'))}">`;
    case 'number_input': {
      const mode = element.is_decimal_allowed === true ? 'decimal' : 'numeric';
      return `<input type="text" inputmode="${mode}" class="bk-control" ${common}${placeholder} value="${escapeHtml(text('initial_value'))}">`;
    }
    case 'datepicker':
      return `<input type="date" class="bk-control bk-picker" ${common} value="${escapeHtml(text('initial_date'))}">`;
    case 'timepicker':
      return `<input type="time" class="bk-control bk-picker" ${common} value="${escapeHtml(text('initial_time'))}">${element.timezone ? `<span class="bk-hint">${escapeHtml(element.timezone)}</span>` : ''}`;
    case 'datetimepicker': {
      const initial = Number.isFinite(element.initial_date_time) ? secondsToLocalInput(element.initial_date_time) : '';
      return `<input type="datetime-local" class="bk-control bk-picker" step="${initial.length > 16 ? 1 : 60}" ${common} value="${escapeHtml(initial)}">`;
    }
    case 'static_select':
    case 'multi_static_select':
      return select(element, common, ctx);
    case 'radio_buttons':
    case 'checkboxes':
      return choices(element, where, common, ctx);
    default:
      return undefined;
  }
}

/**
 * A textarea's value as its HTML content. The HTML parser drops a newline right after `<textarea>`,
 * so a value starting with one (a script, a heredoc; a carriage return is read as one) would come back
 * without it, and a submit that left the field alone would change it: such a value gets one more,
 * as HTML's own serializer writes it.
 */
function textareaContent(value) {
  return `${/^[\r\n]/.test(value) ? '\n' : ''}${escapeHtml(value)}`;
}

function select(element, common, ctx) {
  const multiple = element.type === 'multi_static_select';
  const chosen = multiple ? (Array.isArray(element.initial_options) ? element.initial_options : []) : element.initial_option ? [element.initial_option] : [];
  let index = 0;
  const optionHtml = (option) => {
    const selected = chosen.some((candidate) => sameOption(candidate, option)) ? ' selected' : '';
    return `<option value="${index++}"${selected}>${escapeHtml(plainTextOf(option.text))}</option>`;
  };
  const body = Array.isArray(element.option_groups)
    ? element.option_groups.filter(isRecord).map((group) => `<optgroup label="${escapeHtml(plainTextOf(group.label))}">${(group.options ?? []).filter(isRecord).map(optionHtml).join('')}</optgroup>`).join('')
    : optionsOf(element).map(optionHtml).join('');
  const placeholder = plainTextOf(element.placeholder) || 'Select an item';
  const size = multiple ? ` multiple size="${Math.min(6, Math.max(2, optionsOf(element).length))}"` : '';
  const none = multiple ? '' : `<option value=""${chosen.length === 0 ? ' selected' : ''}>${escapeHtml(placeholder)}</option>`;
  return `<select class="bk-select" ${common}${size}>${none}${body}</select>${multiple && Number.isInteger(element.max_selected_items) ? `<span class="bk-hint">Up to ${element.max_selected_items}</span>` : ''}`;
}

function choices(element, where, common, ctx) {
  const radio = element.type === 'radio_buttons';
  const chosen = radio ? (element.initial_option ? [element.initial_option] : []) : Array.isArray(element.initial_options) ? element.initial_options : [];
  const items = optionsOf(element).map((option, index) => {
    const checked = chosen.some((candidate) => sameOption(candidate, option)) ? ' checked' : '';
    const description = option.description ? `<span class="bk-choice-description">${textObjectHtml(option.description, ctx)}</span>` : '';
    return `<label class="bk-choice"><input type="${radio ? 'radio' : 'checkbox'}" name="${escapeHtml(where.id)}" value="${index}"${checked}><span class="bk-choice-text">${textObjectHtml(option.text, ctx)}${description}</span></label>`;
  });
  return `<div class="bk-choices" role="${radio ? 'radiogroup' : 'group'}" ${common}>${items.join('')}</div>`;
}

/**
 * Makes every menu show the options its HTML marks `selected`, after HTML is inserted. Browsers do
 * this already; happy-dom (the tests' DOM) can land on the wrong option when it parses the markup.
 */
export function settleSelections(root) {
  for (const select of root.querySelectorAll('select')) {
    for (const option of select.options) {
      if (select.multiple || option.hasAttribute('selected')) option.selected = option.hasAttribute('selected');
    }
  }
}
