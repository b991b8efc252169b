/**
 * Fills a modal the bot opened the way a person would in Slack, and returns `view.state.values` in
 * the exact shapes Slack sends (see shared/slack-samples/view_submission.json). Fields are found by
 * their label; anything not given is submitted as Slack would leave it (its initial value).
 */
export function fillForm(view: { blocks: any[] }, valuesByLabel: Record<string, unknown>): Record<string, Record<string, unknown>> {
  const state: Record<string, Record<string, unknown>> = {};
  for (const block of view.blocks) {
    if (block.type !== 'input') continue;
    const label: string = block.label.text;
    const element = block.element;
    const given = Object.hasOwn(valuesByLabel, label);
    const value = given ? valuesByLabel[label] : initialOf(element);
    state[block.block_id] = { [element.action_id]: elementState(element, value) };
  }
  return state;
}

function initialOf(element: any): unknown {
  switch (element.type) {
    case 'static_select':
    case 'radio_buttons':
      return element.initial_option?.value;
    case 'checkboxes':
    case 'multi_static_select':
      return (element.initial_options ?? []).map((option: any) => option.value);
    case 'datepicker':
      return element.initial_date;
    case 'timepicker':
      return element.initial_time;
    case 'datetimepicker':
      return element.initial_date_time;
    default:
      return element.initial_value;
  }
}

function optionFor(element: any, value: unknown): any {
  const option = (element.options ?? []).find((candidate: any) => candidate.value === value || candidate.text?.text === value);
  if (!option) throw new Error(`no option ${String(value)} in ${JSON.stringify(element.options)}`);
  return { text: option.text, value: option.value };
}

function elementState(element: any, value: unknown): unknown {
  switch (element.type) {
    case 'static_select':
    case 'radio_buttons':
      return { type: element.type, selected_option: value === undefined || value === null ? null : optionFor(element, value) };
    case 'checkboxes':
    case 'multi_static_select':
      return { type: element.type, selected_options: ((value as unknown[]) ?? []).map((item) => optionFor(element, item)) };
    case 'number_input':
      return { type: element.type, value: value === undefined || value === null ? null : String(value) };
    case 'datepicker':
      return { type: element.type, selected_date: value ?? null };
    case 'timepicker':
      return { type: element.type, selected_time: value ?? null };
    case 'datetimepicker':
      return { type: element.type, selected_date_time: value ?? null };
    default:
      return { type: element.type, value: value === undefined || value === '' ? null : String(value) };
  }
}
