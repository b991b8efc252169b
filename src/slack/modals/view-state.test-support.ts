import type { types } from '@slack/bolt';
import { decodeActionId, valueAt } from './field-presence.js';
import type { FormField } from './form-field.js';
import type { SlackStateValue } from './parse-field-state.js';
import type { SchemaForm } from './schema-form.js';

/**
 * Test support: `view.state.values` the way Slack builds it on `view_submission`, in the shapes of
 * `/work/shared/slack-samples/view_submission.json` (every input block present, `null` for empty
 * text and unselected menus, `[]` for nothing checked, numbers as strings, date-times in seconds).
 */
export type StateValues = Record<string, Record<string, SlackStateValue & { type: string }>>;

/** The approver submits without touching anything: each element reports its initial value. */
export function stateFromBlocks(blocks: readonly types.KnownBlock[]): StateValues {
  const values: StateValues = {};
  for (const block of blocks) {
    if (block.type !== 'input' || block.block_id === undefined) continue;
    const element = block.element as types.InputBlockElement & Record<string, unknown>;
    values[block.block_id] = { [String(element.action_id)]: untouchedState(element) };
  }
  return values;
}

/**
 * The approver types `input` into the form: every input block of `form` gets the state Slack would
 * send for that value in that element. Kept (non-input) fields are not in the state, as in Slack.
 */
export function stateFromInput(form: SchemaForm, input: unknown): StateValues {
  const values: StateValues = {};
  for (const block of form.blocks) {
    if (block.type !== 'input' || block.block_id === undefined) continue;
    const field = form.fields.find((candidate) => candidate.blockId === block.block_id);
    if (field === undefined) throw new Error(`no field for block ${block.block_id}`);
    const element = block.element as types.InputBlockElement & Record<string, unknown>;
    const actionId = String(element.action_id);
    values[block.block_id] = { [actionId]: typedState(field, element, actionId, fieldInput(field, input)) };
  }
  return values;
}

function fieldInput(field: FormField, input: unknown): { value: unknown } | undefined {
  if (field.control.kind !== 'rest') return valueAt(input, field.path);
  const entries = field.control.properties.flatMap(({ name }) => {
    const found = valueAt(input, [...field.path, name]);
    return found === undefined ? [] : [[name, found.value] as const];
  });
  return { value: Object.fromEntries(entries) };
}

function untouchedState(element: types.InputBlockElement & Record<string, unknown>): SlackStateValue & { type: string } {
  switch (element.type) {
    case 'plain_text_input':
    case 'email_text_input':
    case 'url_text_input':
    case 'number_input':
      return { type: element.type, value: (element.initial_value as string | undefined) || null };
    case 'static_select':
    case 'radio_buttons':
      return { type: element.type, selected_option: selectedOption(element.initial_option) };
    case 'multi_static_select':
    case 'checkboxes':
      return { type: element.type, selected_options: (element.initial_options ?? []).map((option) => selectedOption(option)!) };
    case 'datepicker':
      return { type: element.type, selected_date: element.initial_date ?? null };
    case 'timepicker':
      return { type: element.type, selected_time: element.initial_time ?? null, ...(element.timezone ? { timezone: element.timezone } : {}) };
    case 'datetimepicker':
      return { type: element.type, selected_date_time: element.initial_date_time ?? null };
    default:
      throw new Error(`unexpected element ${element.type}`);
  }
}

function typedState(field: FormField, element: types.InputBlockElement & Record<string, unknown>, actionId: string, input: { value: unknown } | undefined): SlackStateValue & { type: string } {
  const value = input?.value;
  const { variant } = decodeActionId(actionId);
  switch (element.type) {
    case 'plain_text_input': {
      // Clearing a box is how an approver enters null.
      if (value === undefined || (value === null && variant !== 'json')) return { type: element.type, value: null };
      let text: string;
      if (variant === 'json') text = JSON.stringify(value, null, 2);
      else if (field.control.kind === 'list') text = (value as unknown[]).map(String).join('\n');
      else text = typeof value === 'string' ? value : String(value);
      return { type: element.type, value: text === '' ? null : text };
    }
    case 'email_text_input':
    case 'url_text_input':
      return { type: element.type, value: typeof value === 'string' && value !== '' ? value : null };
    case 'number_input':
      return { type: element.type, value: typeof value === 'number' ? String(value) : null };
    case 'static_select':
    case 'radio_buttons': {
      const options = element.options ?? [];
      const option =
        value === undefined
          ? undefined
          : value === null
            ? options.find((candidate) => candidate.value === 'none')
            : field.control.kind === 'boolean'
              ? options.find((candidate) => candidate.value === String(value))
              : options.find((candidate) => optionValue(field, candidate.value ?? "") === value);
      return { type: element.type, selected_option: selectedOption(option) };
    }
    case 'checkboxes':
    case 'multi_static_select': {
      const options = element.options ?? [];
      const selected =
        field.control.kind === 'boolean'
          ? options.filter(() => value === true)
          : options.filter((candidate) => Array.isArray(value) && value.includes(optionValue(field, candidate.value ?? "")));
      return { type: element.type, selected_options: selected.map((option) => selectedOption(option)!) };
    }
    case 'datepicker':
      return { type: element.type, selected_date: typeof value === 'string' ? value : null };
    case 'timepicker':
      return { type: element.type, selected_time: typeof value === 'string' ? value.slice(0, 5) : null };
    case 'datetimepicker':
      return { type: element.type, selected_date_time: typeof value === 'string' ? Date.parse(value) / 1000 : null };
    default:
      throw new Error(`unexpected element ${element.type}`);
  }
}

/** Options carry the enum index as their value. */
function optionValue(field: FormField, optionValue: string): unknown {
  const control = field.control;
  return control.kind === 'choice' || control.kind === 'multi-choice' ? control.options[Number(optionValue)] : undefined;
}

function selectedOption(option: unknown): { text: types.PlainTextElement; value: string } | null {
  if (option === undefined || option === null) return null;
  const { text, value } = option as { text: types.PlainTextElement; value: string };
  // Slack echoes the option with `emoji: true` added to its text.
  return { text: { ...text, emoji: true }, value };
}

/** The input block of the field at a dotted path (`''` for the whole value, `'*'` for the rest field). */
export function inputBlockAt(form: SchemaForm, dottedPath: string): types.InputBlock {
  const field = form.fields.find((candidate) =>
    dottedPath === '*' ? candidate.control.kind === 'rest' : candidate.control.kind !== 'group' && candidate.control.kind !== 'rest' && candidate.path.join('.') === dottedPath,
  );
  const block = form.blocks.find((candidate) => candidate.block_id !== undefined && candidate.block_id === field?.blockId);
  if (block?.type !== 'input') throw new Error(`no input block for ${dottedPath}`);
  return block;
}
