/**
 * Where Slack puts the chosen value of each kind of element in a `block_actions` action (and in
 * `state.values`): `selected_option` for a static select, `selected_date` for a date picker, …
 */
const SELECTION_FIELD: Record<string, string> = {
  static_select: 'selected_option',
  external_select: 'selected_option',
  radio_buttons: 'selected_option',
  overflow: 'selected_option',
  multi_static_select: 'selected_options',
  multi_external_select: 'selected_options',
  checkboxes: 'selected_options',
  users_select: 'selected_user',
  multi_users_select: 'selected_users',
  conversations_select: 'selected_conversation',
  multi_conversations_select: 'selected_conversations',
  channels_select: 'selected_channel',
  multi_channels_select: 'selected_channels',
  datepicker: 'selected_date',
  timepicker: 'selected_time',
  datetimepicker: 'selected_date_time',
  plain_text_input: 'value',
  number_input: 'value',
  email_text_input: 'value',
  url_text_input: 'value',
  rich_text_input: 'rich_text_value',
};

/** The element fields Slack repeats in the action (a button's `value`, `text`, `style`…). */
const COPIED_FIELDS = ['type', 'value', 'text', 'style', 'url', 'confirm'] as const;

export function actionFromElement(options: {
  element: Record<string, unknown>;
  actionId: string;
  blockId: string;
  actionTs: string;
  selected: unknown;
}): Record<string, unknown> {
  const copied = Object.fromEntries(COPIED_FIELDS.filter((field) => options.element[field] !== undefined).map((field) => [field, options.element[field]]));
  const type = typeof options.element.type === 'string' ? options.element.type : 'button';
  const selectionField = SELECTION_FIELD[type];
  // A selection replaces the element's own `value` (a text input reports what was typed).
  const selection = selectionField === undefined || options.selected === undefined ? {} : { [selectionField]: options.selected };
  return { ...copied, type, action_id: options.actionId, block_id: options.blockId, action_ts: options.actionTs, ...selection };
}
