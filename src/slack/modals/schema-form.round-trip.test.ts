import { asSchema, zodSchema } from 'ai';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { JsonSchema } from './json-schema.js';
import { buildSchemaForm, parseSchemaForm, type SchemaForm } from './schema-form.js';
import { inputBlockAt, stateFromBlocks, stateFromInput, type StateValues } from './view-state.test-support.js';

/** `view.state.values` entries copied from /work/shared/slack-samples/view_submission.json. */
const SAMPLE_STATE: Record<string, object> = {
  plain_text_input: { type: 'plain_text_input', value: 'payments-api-canary' },
  static_select: { type: 'static_select', selected_option: { text: { type: 'plain_text', text: 'staging', emoji: true }, value: 'staging' } },
  number_input: { type: 'number_input', value: '5' },
  checkboxes: { type: 'checkboxes', selected_options: [{ text: { type: 'plain_text', text: 'wait', emoji: true }, value: 'wait' }] },
  multi_static_select: { type: 'multi_static_select', selected_options: [{ text: { type: 'plain_text', text: 'eu-west-1', emoji: true }, value: 'eu-west-1' }] },
  radio_buttons: { type: 'radio_buttons', selected_option: null },
  datepicker: { type: 'datepicker', selected_date: '2025-01-16' },
  timepicker: { type: 'timepicker', selected_time: '06:30' },
  datetimepicker: { type: 'datetimepicker', selected_date_time: 1737009000 },
  email_text_input: { type: 'email_text_input', value: 'oncall@example.com' },
  url_text_input: { type: 'url_text_input', value: 'https://runbooks.example.com/payments-api' },
};

const restartSchema = z.object({
  deployment: z.string().min(1).max(253).describe('Name of the Deployment to restart'),
  namespace: z.enum(['staging', 'production']),
  cluster: z.enum(['eu-1', 'eu-2', 'eu-3', 'us-1', 'us-2', 'us-3', 'ap-1']).optional(),
  replicas: z.int().min(0).max(50).optional(),
  timeout_seconds: z.number().min(0.5).optional(),
  flags: z.array(z.enum(['wait', 'dry_run'])).optional(),
  regions: z.array(z.enum(['eu-west-1', 'us-east-1', 'ap-south-1', 'us-west-2', 'eu-central-1', 'sa-east-1', 'ap-northeast-1', 'ca-central-1', 'me-south-1', 'af-south-1', 'eu-north-1'])).optional(),
  strategy: z.enum(['rolling', 'recreate']).optional(),
  window_date: z.iso.date().optional(),
  window_time: z.string().meta({ format: 'time' }).optional(),
  not_before: z.iso.datetime().optional(),
  notify_email: z.email().optional(),
  runbook_url: z.url().optional(),
  reason: z.string().optional(),
  extra: z.record(z.string(), z.unknown()).optional(),
});

async function restartJsonSchema(): Promise<JsonSchema> {
  return (await asSchema(zodSchema(restartSchema)).jsonSchema) as JsonSchema;
}

const proposed = {
  deployment: 'payments-api',
  namespace: 'staging',
  cluster: 'eu-2',
  replicas: 3,
  flags: ['wait'],
  regions: ['eu-west-1', 'us-east-1'],
  window_date: '2025-01-16',
  window_time: '06:30',
  not_before: '2025-01-16T06:30:00Z',
  notify_email: 'oncall@example.com',
  runbook_url: 'https://runbooks.example.com/payments-api',
  reason: 'Canary first;\nfull rollout after smoke tests.',
  extra: { annotate: true },
};

function untouched(form: SchemaForm): unknown {
  const parsed = parseSchemaForm({ form, stateValues: stateFromBlocks(form.blocks) });
  if (!parsed.ok) throw new Error(`unexpected errors: ${JSON.stringify(parsed.errors)}`);
  return parsed.value;
}

function submitted(form: SchemaForm, stateValues: StateValues): unknown {
  const parsed = parseSchemaForm({ form, stateValues });
  if (!parsed.ok) throw new Error(`unexpected errors: ${JSON.stringify(parsed.errors)}`);
  return parsed.value;
}

describe('a zod tool schema with every element type', () => {
  it('gives back the proposed input when the approver changes nothing', async () => {
    const form = buildSchemaForm({ schema: await restartJsonSchema(), initialValue: proposed });
    expect(untouched(form)).toEqual(proposed);
    expect(restartSchema.safeParse(untouched(form)).success).toBe(true);
  });

  it('gives back what the approver typed', async () => {
    const form = buildSchemaForm({ schema: await restartJsonSchema(), initialValue: proposed });
    const edited = {
      deployment: 'payments-api-canary',
      namespace: 'production',
      cluster: 'ap-1',
      replicas: 5,
      timeout_seconds: 2.5,
      flags: ['wait', 'dry_run'],
      regions: ['us-east-1', 'ap-south-1'],
      strategy: 'recreate',
      window_date: '2025-02-01',
      window_time: '22:15',
      not_before: '2025-02-01T22:15:00Z',
      notify_email: 'sre@example.com',
      runbook_url: 'https://runbooks.example.com/other',
      reason: 'Full rollout.',
      extra: { annotate: false, ticket: 'OPS-1' },
    };
    expect(submitted(form, stateFromInput(form, edited))).toEqual(edited);
  });

  it('fills state in exactly the shapes of a real Slack submission', async () => {
    const form = buildSchemaForm({ schema: await restartJsonSchema(), initialValue: { ...proposed, strategy: undefined } });
    const state = stateFromBlocks(form.blocks);
    const seen = new Set<string>();
    for (const actions of Object.values(state)) {
      for (const entry of Object.values(actions)) {
        const sample = SAMPLE_STATE[entry.type];
        expect(sample, entry.type).toBeDefined();
        expect(Object.keys(entry).sort(), entry.type).toEqual(Object.keys(sample!).sort());
        seen.add(entry.type);
      }
    }
    expect([...seen].sort()).toEqual(Object.keys(SAMPLE_STATE).sort());
  });

  it('round-trips through z.toJSONSchema’s draft-07 input schema too', () => {
    const schema = z.toJSONSchema(restartSchema, { target: 'draft-7', io: 'input' }) as JsonSchema;
    const form = buildSchemaForm({ schema, initialValue: proposed });
    expect(untouched(form)).toEqual(proposed);
  });

  it('can be parsed from the schema alone, as a submit handler would', async () => {
    const schema = await restartJsonSchema();
    const form = buildSchemaForm({ schema, initialValue: proposed });
    expect(parseSchemaForm({ schema, stateValues: stateFromBlocks(form.blocks) })).toEqual({ ok: true, value: proposed });
  });
});

describe('cleared and untouched fields', () => {
  const schema: JsonSchema = {
    type: 'object',
    properties: {
      name: { type: 'string' },
      note: { type: 'string' },
      owner: { anyOf: [{ type: 'string' }, { type: 'null' }] },
      ticket: { type: ['string', 'null'] },
      replicas: { type: 'integer', default: 3 },
      wait: { type: 'boolean' },
      force: { type: 'boolean', default: true },
      tags: { type: 'array', items: { type: 'string' } },
    },
    required: ['name', 'ticket'],
  };

  /** Submits the form built from `original` with every input emptied. */
  function clearAll(original: Record<string, unknown>): unknown {
    const form = buildSchemaForm({ schema, initialValue: original });
    return submitted(form, stateFromInput(form, {}));
  }

  it('leave optional properties out, and nullable ones that held a value null', () => {
    expect(clearAll({ name: 'a', note: 'n', owner: 'alice', ticket: 'OPS-1', replicas: 5, wait: true, force: false, tags: ['x'] })).toEqual({
      name: '',
      owner: null,
      ticket: null,
      wait: false,
      force: false,
      tags: [],
    });
  });

  it('keep properties the model left out absent, even where a default was shown', () => {
    const original = { name: 'a', ticket: null };
    const form = buildSchemaForm({ schema, initialValue: original });
    expect(inputBlockAt(form, 'replicas').element).toMatchObject({ initial_value: '3' });
    expect(inputBlockAt(form, 'force').element).toMatchObject({ initial_options: [{ value: 'true' }] });
    expect(untouched(form)).toEqual(original);
  });

  it('keep "", false, [] and null as they were', () => {
    const original = { name: '', note: '', owner: null, ticket: null, wait: false, tags: [] };
    expect(untouched(buildSchemaForm({ schema, initialValue: original }))).toEqual(original);
  });

  it('give defaults explicitly on a form opened without a value', () => {
    const form = buildSchemaForm({ schema });
    expect(untouched(form)).toEqual({ name: '', ticket: null, replicas: 3, wait: false, force: true, tags: [] });
  });
});

describe('defaults shown for properties the model left out', () => {
  const regions = ['eu-west-1', 'us-east-1', 'ap-south-1', 'us-west-2', 'eu-central-1', 'sa-east-1', 'ap-northeast-1', 'ca-central-1', 'me-south-1', 'af-south-1', 'eu-north-1'];
  const schema: JsonSchema = {
    type: 'object',
    properties: {
      name: { type: 'string' },
      force: { type: 'boolean', default: true },
      quiet: { type: 'boolean', default: false },
      flags: { type: 'array', items: { type: 'string', enum: ['wait', 'dry_run', 'prune'] }, default: ['wait', 'prune'] },
      regions: { type: 'array', items: { type: 'string', enum: regions }, default: ['eu-west-1', 'us-east-1'] },
      tags: { type: 'array', items: { type: 'string' }, default: ['canary', 'payments'] },
      ports: { type: 'array', items: { type: 'integer' }, default: [] },
      verify: { type: ['boolean', 'null'], default: true },
    },
    required: ['name'],
  };
  const original = { name: 'api' };

  it('are shown, and left out again when submitted as shown', () => {
    const form = buildSchemaForm({ schema, initialValue: original });
    expect(inputBlockAt(form, 'force').element).toMatchObject({ type: 'checkboxes', initial_options: [{ value: 'true' }] });
    expect(inputBlockAt(form, 'flags').element).toMatchObject({ type: 'checkboxes', initial_options: [{ value: '0' }, { value: '2' }] });
    expect(inputBlockAt(form, 'regions').element).toMatchObject({ type: 'multi_static_select', initial_options: [{ value: '0' }, { value: '1' }] });
    expect(inputBlockAt(form, 'tags').element).toMatchObject({ type: 'plain_text_input', initial_value: 'canary\npayments' });
    expect(untouched(form)).toEqual(original);
    expect(submitted(form, stateFromInput(form, { ...original, force: true, quiet: false, flags: ['wait', 'prune'], regions: ['eu-west-1', 'us-east-1'], tags: ['canary', 'payments'], ports: [], verify: true }))).toEqual(original);
  });

  it('an unticked default-true checkbox comes back false', () => {
    const form = buildSchemaForm({ schema, initialValue: original });
    // Every other input is left as shown.
    const force = inputBlockAt(form, 'force').block_id!;
    const state = { ...stateFromBlocks(form.blocks), [force]: stateFromInput(form, { force: false })[force]! };
    expect(submitted(form, state)).toEqual({ name: 'api', force: false });
  });

  it('a cleared checkbox group, multi-select or list with a non-empty default comes back []', () => {
    const form = buildSchemaForm({ schema, initialValue: original });
    // `ports` (default `[]`) and `quiet` (default `false`) were shown empty and are left so: still left out.
    expect(submitted(form, stateFromInput(form, { ...original, force: true, verify: true }))).toEqual({ name: 'api', flags: [], regions: [], tags: [] });
  });

  it('anything else the approver chose comes back explicitly', () => {
    const form = buildSchemaForm({ schema, initialValue: original });
    const chosen = { name: 'api', force: true, quiet: true, flags: ['dry_run'], regions: ['sa-east-1'], tags: ['canary'], ports: [8080], verify: null };
    expect(submitted(form, stateFromInput(form, chosen))).toEqual({ name: 'api', quiet: true, flags: ['dry_run'], regions: ['sa-east-1'], tags: ['canary'], ports: [8080], verify: null });
  });

  it('inside an object the model left out, a changed default keeps the object', () => {
    const nested: JsonSchema = { type: 'object', properties: { options: { type: 'object', properties: { force: { type: 'boolean', default: true }, tags: { type: 'array', items: { type: 'string' } } } } } };
    const form = buildSchemaForm({ schema: nested, initialValue: {} });
    expect(untouched(form)).toEqual({});
    expect(submitted(form, stateFromInput(form, { options: { force: false } }))).toEqual({ options: { force: false } });
  });
});

describe('nested objects', () => {
  const schema: JsonSchema = {
    type: 'object',
    properties: {
      target: { type: 'string' },
      options: {
        type: 'object',
        properties: { force: { type: 'boolean' }, grace: { type: 'integer' }, label: { type: 'string' } },
        required: ['grace'],
      },
      limits: { anyOf: [{ type: 'object', properties: { cpu: { type: 'string' } }, required: ['cpu'] }, { type: 'null' }] },
    },
    required: ['target', 'limits'],
  };

  it('that were absent stay absent when left blank', () => {
    const original = { target: 'api', limits: null };
    expect(untouched(buildSchemaForm({ schema, initialValue: original }))).toEqual(original);
  });

  it('that were empty stay empty', () => {
    const form = buildSchemaForm({ schema: { type: 'object', properties: { options: { type: 'object', properties: { force: { type: 'boolean' } } } } }, initialValue: { options: {} } });
    expect(untouched(form)).toEqual({ options: {} });
  });

  it('round-trip their values', () => {
    const original = { target: 'api', options: { force: true, grace: 30, label: 'x' }, limits: { cpu: '500m' } };
    expect(untouched(buildSchemaForm({ schema, initialValue: original }))).toEqual(original);
  });

  it('become null or disappear when every field is cleared', () => {
    const form = buildSchemaForm({ schema, initialValue: { target: 'api', options: { grace: 30 }, limits: { cpu: '1' } } });
    expect(submitted(form, stateFromInput(form, { target: 'api' }))).toEqual({ target: 'api', limits: null });
  });

  it('that are partly filled still need their required fields', () => {
    const form = buildSchemaForm({ schema, initialValue: { target: 'api', limits: null } });
    const parsed = parseSchemaForm({ form, stateValues: stateFromInput(form, { target: 'api', options: { label: 'x' }, limits: null }) });
    expect(parsed).toEqual({ ok: false, errors: { [inputBlockAt(form, 'options.grace').block_id!]: 'Required' } });
  });
});

describe('values kept exactly', () => {
  it('date-times in other spellings are edited as text', () => {
    const schema: JsonSchema = { type: 'object', properties: { at: { type: 'string', format: 'date-time' } } };
    for (const at of ['2025-01-16T07:30:00+01:00', '2025-01-16T06:30:00.250Z', '2025-01-16T06:30:00Z']) {
      expect(untouched(buildSchemaForm({ schema, initialValue: { at } }))).toEqual({ at });
    }
  });

  it('times come back as HH:mm or HH:mm:ss, as they were written', () => {
    const schema: JsonSchema = { type: 'object', properties: { at: { type: 'string', format: 'time' } } };
    for (const at of ['06:30', '06:30:00', '06:30:15']) expect(untouched(buildSchemaForm({ schema, initialValue: { at } }))).toEqual({ at });
    const fresh = buildSchemaForm({ schema });
    expect(submitted(fresh, stateFromInput(fresh, { at: '07:45' }))).toEqual({ at: '07:45:00' });
    const hoursAndMinutes = buildSchemaForm({ schema: { type: 'object', properties: { at: { type: 'string', format: 'time', pattern: '^\\d\\d:\\d\\d$' } } } });
    expect(submitted(hoursAndMinutes, stateFromInput(hoursAndMinutes, { at: '07:45' }))).toEqual({ at: '07:45' });
  });

  it('times for a validator that reads `time` as RFC 3339 (ajv) are picked in UTC and get seconds and a zone', () => {
    const schema: JsonSchema = { type: 'object', properties: { at: { type: 'string', format: 'time' }, windows: { type: 'array', items: { type: 'string', format: 'time' } } } };
    const fresh = buildSchemaForm({ schema, timeFormat: 'full-time' });
    expect(inputBlockAt(fresh, 'at').element).toMatchObject({ type: 'timepicker', timezone: 'UTC' });
    expect(submitted(fresh, stateFromInput(fresh, { at: '07:45' }))).toEqual({ at: '07:45:00Z', windows: [] });
    for (const at of ['06:30:00Z', '06:30:00+02:00', '06:30']) {
      const form = buildSchemaForm({ schema, initialValue: { at }, timeFormat: 'full-time' });
      expect(inputBlockAt(form, 'at').element.type).toBe(at === '06:30:00Z' ? 'timepicker' : 'plain_text_input');
      // What ajv would refuse is refused by the form too, where the approver can still fix it.
      const parsed = parseSchemaForm({ form, stateValues: stateFromBlocks(form.blocks) });
      expect(parsed, at).toEqual(at === '06:30' ? { ok: false, errors: { [inputBlockAt(form, 'at').block_id ?? '']: expect.stringMatching(/time zone/) } } : { ok: true, value: { at } });
    }
    const list = buildSchemaForm({ schema, timeFormat: 'full-time' });
    expect(parseSchemaForm({ form: list, stateValues: stateFromInput(list, { windows: ['06:30:00Z', '07:00'] }) })).toEqual({
      ok: false,
      errors: { [inputBlockAt(list, 'windows').block_id ?? '']: expect.stringMatching(/^Item 2: must be a time with seconds and a time zone/) },
    });
    // Other lists keep the layout they had.
    expect(buildSchemaForm({ schema: { type: 'object', properties: { tags: { type: 'array', items: { type: 'string' } } } }, timeFormat: 'full-time' }).fields[1]?.control).not.toHaveProperty('timeFormat');
  });

  it('strings with control characters are edited as JSON strings', () => {
    const schema: JsonSchema = { type: 'object', properties: { body: { type: 'string' } } };
    const original = { body: 'tab\there\r\nbell\u0007' };
    const form = buildSchemaForm({ schema, initialValue: original });
    expect(inputBlockAt(form, 'body').element).toMatchObject({ initial_value: JSON.stringify(original.body) });
    expect(untouched(form)).toEqual(original);
  });

  it('members of an enum too large for a menu that a line cannot hold are chosen as JSON, spaces and all', () => {
    // One-per-line lists trim their lines: ` 0` would come back as `0`, which is not a member.
    const spaced = Array.from({ length: 101 }, (_, index) => ` ${index}`);
    const schema: JsonSchema = { type: 'object', properties: { shards: { type: 'array', items: { type: 'string', enum: spaced } } } };
    const fresh = buildSchemaForm({ schema });
    expect(submitted(fresh, stateFromInput(fresh, { shards: [' 0', ' 42'] }))).toEqual({ shards: [' 0', ' 42'] });
    expect(inputBlockAt(fresh, 'shards')).toMatchObject({ label: { text: 'Shards (JSON)' } });
    expect(untouched(buildSchemaForm({ schema, initialValue: { shards: [' 7'] } }))).toEqual({ shards: [' 7'] });
    // A blank line is skipped and a line break splits a line: `""` and `two\nlines` could never be listed.
    const odd = [...Array.from({ length: 101 }, (_, index) => `shard-${index}`), '', 'two\nlines'];
    const oddForm = buildSchemaForm({ schema: { type: 'object', properties: { shards: { type: 'array', items: { type: 'string', enum: odd } } } } });
    expect(submitted(oddForm, stateFromInput(oddForm, { shards: ['', 'two\nlines'] }))).toEqual({ shards: ['', 'two\nlines'] });
    // Members that all fit a line keep the list.
    const plain = buildSchemaForm({ schema: { type: 'object', properties: { shards: { type: 'array', items: { type: 'string', enum: odd.slice(0, 101) } } } } });
    expect(inputBlockAt(plain, 'shards').element).toMatchObject({ placeholder: { text: 'One per line' } });
    expect(submitted(plain, stateFromInput(plain, { shards: ['shard-0', 'shard-42'] }))).toEqual({ shards: ['shard-0', 'shard-42'] });
  });

  it('members of a one-choice enum too large for a menu that a text box cannot give back are chosen as JSON', () => {
    const options = [...Array.from({ length: 120 }, (_, index) => `service-${index}`), '', 'two\nlines'];
    const form = buildSchemaForm({ schema: { type: 'object', properties: { service: { type: 'string', enum: options } }, required: ['service'] } });
    expect(submitted(form, stateFromInput(form, { service: '' }))).toEqual({ service: '' });
    expect(inputBlockAt(form, 'service')).toMatchObject({ label: { text: 'Service (JSON)' } });
    expect(submitted(form, stateFromInput(form, { service: 'two\nlines' }))).toEqual({ service: 'two\nlines' });
    expect(submitted(form, stateFromInput(form, { service: 'service-7' }))).toEqual({ service: 'service-7' });
  });

  it('values too long for any input are kept unchanged and said so', () => {
    const schema: JsonSchema = { type: 'object', properties: { script: { type: 'string' }, name: { type: 'string' } } };
    const original = { script: 'echo hi\n'.repeat(600), name: 'job' };
    const form = buildSchemaForm({ schema, initialValue: original });
    expect(form.blocks[0]).toMatchObject({ type: 'context', elements: [{ text: 'Script is too long to edit here (4,800 characters); it is kept unchanged.' }] });
    expect(form.inputBlockIds).toEqual(['f:1']);
    expect(untouched(form)).toEqual(original);
    expect(parseSchemaForm({ schema, stateValues: stateFromBlocks(form.blocks), initialValue: original })).toEqual({ ok: true, value: original });
  });

  it('properties the schema allows but does not list are kept; forbidden ones are dropped', () => {
    const properties = { name: { type: 'string' } };
    const open = buildSchemaForm({ schema: { type: 'object', properties }, initialValue: { name: 'a', extra: 1 } });
    expect(untouched(open)).toEqual({ name: 'a', extra: 1 });
    const closed = buildSchemaForm({ schema: { type: 'object', properties, additionalProperties: false }, initialValue: { name: 'a', extra: 1 } });
    expect(closed.blocks.at(-1)).toMatchObject({ type: 'context', elements: [{ text: 'Not allowed by the schema, removed on submit: extra' }] });
    expect(untouched(closed)).toEqual({ name: 'a' });
  });

  it('a wrong type from the model is shown as JSON and must be fixed', () => {
    const schema: JsonSchema = { type: 'object', properties: { replicas: { type: 'integer' } } };
    const form = buildSchemaForm({ schema, initialValue: { replicas: '3' } });
    const block = inputBlockAt(form, 'replicas');
    expect(block).toMatchObject({ label: { text: 'Replicas (JSON)' }, element: { initial_value: '"3"' } });
    expect(parseSchemaForm({ form, stateValues: stateFromBlocks(form.blocks) })).toEqual({ ok: false, errors: { [block.block_id!]: 'Must be a number' } });
    expect(submitted(form, stateFromInput(form, { replicas: 3 }))).toEqual({ replicas: 3 });
  });

  it('a top-level value that is not an object round-trips', () => {
    for (const [schema, value] of [
      [{ type: 'string', enum: ['yes', 'no'] }, 'no'],
      [{ type: 'array', items: { type: 'number' } }, [1.5, 2]],
      [{ type: 'boolean' }, false],
      [{ type: ['integer', 'null'] }, null],
    ] as const) {
      expect(untouched(buildSchemaForm({ schema, initialValue: value }))).toEqual(value);
    }
  });
});
