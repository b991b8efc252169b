import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { makeStep } from '../../../approvals/pending-step.test-support.js';
import { buildSchemaForm, parseSchemaForm, type SchemaForm } from '../../../slack/modals/schema-form.js';
import { stateFromBlocks, stateFromInput } from '../../../slack/modals/view-state.test-support.js';
import { editCallView } from '../../../slack/views/edit-call-view.js';
import { blockKit, newWindow, WORKSPACE_CONTEXT, type StateValues } from './page-modules.test-support.js';
import { PROPOSED_INPUT, RICH_SCHEMA } from './rich-schema.test-support.js';

const window = newWindow();
const document = window.document;
afterAll(() => window.happyDOM.close());

interface Control {
  value: string;
  checked: boolean;
  selected: boolean;
  textContent: string | null;
  options: ArrayLike<Control>;
  querySelectorAll(selector: string): ArrayLike<Control>;
  closest(selector: string): Control | null;
}

let form: SchemaForm;
let view: ReturnType<typeof editCallView>;

/** Opens the Edit modal of a call proposing `input`, as the page shows it. */
function open(input: unknown) {
  form = buildSchemaForm({ schema: RICH_SCHEMA, initialValue: input });
  const step = makeStep([{ approvalId: 'ap1', input }]);
  view = editCallView({ step, call: step.calls[0]!, form, privateMetadata: '{}' });
  document.body.innerHTML = blockKit.renderModal(view, { viewId: 'V1' }, WORKSPACE_CONTEXT);
  blockKit.settleSelections(document.body);
}

function collect(): StateValues {
  return blockKit.collectStateValues(document.body, view.blocks);
}

function parsed(state: StateValues) {
  return parseSchemaForm({ schema: RICH_SCHEMA, stateValues: state as never });
}

function control(blockId: string): Control {
  const node = document.body.querySelector(`[data-block-id="${blockId}"] [data-control]`) as unknown as Control | null;
  if (!node) throw new Error(`no control in ${blockId}`);
  return node;
}

/** The block id of the field at a dotted path. */
function at(path: string): string {
  const field = form.fields.find((candidate) => candidate.path.join('.') === path);
  if (!field) throw new Error(`no field ${path}`);
  return field.blockId;
}

/** Types into a box, as a person would (one string). */
function type(path: string, text: string): void {
  control(at(path)).value = text;
}

/** Chooses options by their labels in a menu, radio group or checkbox group. */
function choose(path: string, labels: string[]): void {
  const node = control(at(path));
  const labelOf = (option: Control) => (option.closest('label') ?? option).textContent?.trim();
  if ('options' in node && node.options !== undefined) {
    for (const option of Array.from(node.options)) option.selected = labels.includes(labelOf(option) ?? '');
    return;
  }
  for (const input of Array.from(node.querySelectorAll('input'))) input.checked = labels.includes(labelOf(input) ?? '');
}

/** What a datetime-local input shows for an instant, in this process's time zone. */
function localDateTime(iso: string): string {
  const date = new Date(iso);
  const pad = (number: number) => String(number).padStart(2, '0');
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(date.getMinutes())}`;
}

describe('the Edit modal, filled in the page and read by the bot', () => {
  beforeEach(() => open(PROPOSED_INPUT));

  it('shows the proposed input: submitting untouched gives exactly Slack’s state, and the same input back', () => {
    const state = collect();
    expect(state).toEqual(stateFromBlocks(form.blocks));
    expect(parsed(state)).toEqual({ ok: true, value: PROPOSED_INPUT });
    expect(parseSchemaForm({ form, stateValues: state as never })).toEqual({ ok: true, value: PROPOSED_INPUT });
  });

  it('gives back every field the approver changed, in the shapes Slack sends', () => {
    const edited = {
      deployment: 'payments-api-canary',
      namespace: 'production',
      cluster: 'ap-1',
      replicas: 5,
      timeout_seconds: 2.5,
      flags: ['wait', 'dry_run'],
      regions: ['us-east-1', 'ap-south-1'],
      strategy: 'recreate',
      wait: false,
      force: true,
      window_date: '2025-02-01',
      window_time: '22:15',
      not_before: '2025-02-01T22:15:00Z',
      notify_email: 'sre@example.com',
      runbook_url: 'https://runbooks.example.com/other',
      reason: 'Full rollout.',
      tags: ['canary', 'eu'],
      limits: { cpu: '1', memory_mb: 512 },
      extra: { annotate: false, ticket: 'OPS-1' },
    };
    type('deployment', edited.deployment);
    choose('namespace', ['production']);
    choose('cluster', ['ap-1']);
    type('replicas', '5');
    type('timeout_seconds', '2.5');
    choose('flags', ['wait', 'dry_run']);
    choose('regions', ['us-east-1', 'ap-south-1']);
    choose('strategy', ['recreate']);
    choose('wait', []);
    choose('force', ['Yes']);
    type('window_date', edited.window_date);
    type('window_time', edited.window_time);
    type('not_before', localDateTime(edited.not_before));
    type('notify_email', edited.notify_email);
    type('runbook_url', edited.runbook_url);
    type('reason', edited.reason);
    type('tags', 'canary\neu');
    type('limits.cpu', '1');
    type('limits.memory_mb', '512');
    type('extra', JSON.stringify(edited.extra, null, 2));
    const state = collect();
    expect(state).toEqual(stateFromInput(form, edited));
    expect(parsed(state)).toEqual({ ok: true, value: edited });
  });

  it('an emptied optional field is left out, a changed one comes back changed, the rest unchanged', () => {
    type('notify_email', '');
    choose('cluster', []);
    type('deployment', 'worker');
    const result = parsed(collect());
    const { notify_email: _email, cluster: _cluster, ...rest } = PROPOSED_INPUT;
    expect(result).toEqual({ ok: true, value: { ...rest, deployment: 'worker' } });
  });

  it('checks what Slack checks before sending, and shows each error under its own block', () => {
    type('deployment', '');
    type('replicas', '500');
    type('timeout_seconds', 'soon');
    type('notify_email', 'not an email');
    const errors = blockKit.validateStateValues(view.blocks, collect());
    expect(errors).toEqual({
      [at('deployment')]: 'Please complete this required field.',
      [at('replicas')]: 'Please enter a number no greater than 50.',
      [at('timeout_seconds')]: 'Please enter a number.',
      [at('notify_email')]: 'Please enter a valid email address.',
    });
    blockKit.showModalErrors(document.body, errors);
    const shown = Array.from(document.body.querySelectorAll('.bk-error')).filter((node) => !node.hasAttribute('hidden'));
    expect(shown.map((node) => [node.closest('[data-block-id]')!.getAttribute('data-block-id'), node.textContent])).toEqual(Object.entries(errors));
  });

  it('shows the bot’s own field errors (response_action: errors) under the right block', () => {
    type('extra', '{ not json');
    const result = parsed(collect());
    expect(result.ok).toBe(false);
    const errors = result.ok ? {} : result.errors;
    blockKit.showModalErrors(document.body, errors);
    const error = document.body.querySelector(`[data-error-for="${at('extra')}"]`)!;
    expect(error.hasAttribute('hidden')).toBe(false);
    expect(error.textContent).toMatch(/^Not valid JSON/);
    blockKit.showModalErrors(document.body, {});
    expect(error.hasAttribute('hidden')).toBe(true);
  });
});

describe('a form opened without a value (ask_user)', () => {
  it('returns what was typed, and leaves untouched optional fields out', () => {
    form = buildSchemaForm({ schema: RICH_SCHEMA });
    view = editCallView({ step: makeStep(['ap1']), call: makeStep(['ap1']).calls[0]!, form, privateMetadata: '{}' });
    document.body.innerHTML = blockKit.renderModal(view, { viewId: 'V2' }, WORKSPACE_CONTEXT);
    blockKit.settleSelections(document.body);
    expect(collect()).toEqual(stateFromBlocks(form.blocks));
    type('deployment', 'api');
    choose('namespace', ['staging']);
    type('replicas', '2');
    expect(parsed(collect())).toEqual({ ok: true, value: { deployment: 'api', namespace: 'staging', replicas: 2, wait: false, flags: [], regions: [], tags: [] } });
  });
});
