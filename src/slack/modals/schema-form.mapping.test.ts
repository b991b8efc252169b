import { asSchema, zodSchema } from 'ai';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { findBlockKitViolations } from '../blocks/limits.js';
import type { JsonSchema } from './json-schema.js';
import { buildSchemaFields, buildSchemaForm, type SchemaForm } from './schema-form.js';
import { inputBlockAt } from './view-state.test-support.js';

function form(properties: Record<string, JsonSchema>, { required = [] as string[], initialValue }: { required?: string[]; initialValue?: unknown } = {}): SchemaForm {
  return buildSchemaForm({ schema: { type: 'object', properties, required, additionalProperties: false }, initialValue });
}

/** The element of the one field in a single-property form. */
function elementFor(property: JsonSchema, options: { required?: boolean; value?: unknown } = {}): Record<string, unknown> {
  const built = form({ x: property }, { required: options.required ? ['x'] : [], initialValue: 'value' in options ? { x: options.value } : undefined });
  return inputBlockAt(built, 'x').element as unknown as Record<string, unknown>;
}

function optionTexts(element: Record<string, unknown>): string[] {
  return ((element.options ?? []) as { text: { text: string } }[]).map((option) => option.text.text);
}

describe('strings', () => {
  it('are single-line text inputs with the schema lengths', () => {
    expect(elementFor({ type: 'string', minLength: 3, maxLength: 63 }, { required: true, value: 'payments-api' })).toMatchObject({
      type: 'plain_text_input',
      multiline: false,
      min_length: 3,
      max_length: 63,
      initial_value: 'payments-api',
    });
  });

  it('cap max_length at Slack’s 3,000', () => {
    expect(elementFor({ type: 'string', maxLength: 100_000 })).toMatchObject({ max_length: 3000 });
  });

  it('are multiline when long text is expected', () => {
    expect(elementFor({ type: 'string', maxLength: 500 })).toMatchObject({ multiline: true });
    expect(elementFor({ type: 'string', format: 'textarea' })).toMatchObject({ multiline: true });
    expect(inputBlockAt(form({ commit_message: { type: 'string' } }), 'commit_message').element).toMatchObject({ multiline: true });
    expect(inputBlockAt(form({ script: { type: 'string' } }), 'script').element).toMatchObject({ multiline: true });
    expect(elementFor({ type: 'string', description: 'Markdown body of the post' })).toMatchObject({ multiline: true });
    expect(elementFor({ type: 'string' }, { value: 'line one\nline two' })).toMatchObject({ multiline: true });
    expect(elementFor({ type: 'string' }, { value: 'x'.repeat(400) })).toMatchObject({ multiline: true });
    expect(elementFor({ type: 'string' }, { value: 'short' })).toMatchObject({ multiline: false });
  });

  it('use email, URL, date, date-time and time elements for those formats', () => {
    expect(elementFor({ type: 'string', format: 'email' }, { value: 'oncall@example.com' })).toMatchObject({ type: 'email_text_input', initial_value: 'oncall@example.com' });
    expect(elementFor({ type: 'string', format: 'uri' }, { value: 'https://runbooks.example.com/x' })).toMatchObject({ type: 'url_text_input', initial_value: 'https://runbooks.example.com/x' });
    expect(elementFor({ type: 'string', format: 'date' }, { value: '2025-01-16' })).toMatchObject({ type: 'datepicker', initial_date: '2025-01-16' });
    expect(elementFor({ type: 'string', format: 'date-time' }, { value: '2025-01-16T06:30:00Z' })).toMatchObject({ type: 'datetimepicker', initial_date_time: 1737009000 });
    expect(elementFor({ type: 'string', format: 'time' }, { value: '06:30' })).toMatchObject({ type: 'timepicker', initial_time: '06:30' });
  });

  it('show values a picker or typed input cannot hold exactly as plain text', () => {
    expect(elementFor({ type: 'string', format: 'email' }, { value: 'not an email' })).toMatchObject({ type: 'plain_text_input', initial_value: 'not an email' });
    expect(elementFor({ type: 'string', format: 'date-time' }, { value: '2025-01-16T07:30:00+01:00' })).toMatchObject({ type: 'plain_text_input', initial_value: '2025-01-16T07:30:00+01:00' });
    expect(elementFor({ type: 'string', format: 'time' }, { value: '06:30:15' })).toMatchObject({ type: 'plain_text_input' });
  });

  it('become radio buttons for up to five options and a menu for more', () => {
    expect(elementFor({ type: 'string', enum: ['rolling', 'recreate'] }, { required: true, value: 'recreate' })).toMatchObject({
      type: 'radio_buttons',
      initial_option: { text: { text: 'recreate' } },
    });
    const regions = Array.from({ length: 30 }, (_, index) => `region-${index}`);
    const select = elementFor({ type: 'string', enum: regions }, { required: true, value: 'region-7' });
    expect(select).toMatchObject({ type: 'static_select', initial_option: { text: { text: 'region-7' } } });
    expect(optionTexts(select)).toEqual(regions);
  });

  it('offer "(none)" on menus that may be left empty', () => {
    expect(optionTexts(elementFor({ type: 'string', enum: ['a', 'b'] }))).toEqual(['a', 'b', '(none)']);
    expect(optionTexts(elementFor({ type: ['string', 'null'], enum: ['a', 'b', null] }, { required: true }))).toEqual(['a', 'b', '(none)']);
    expect(optionTexts(elementFor({ type: 'string', enum: ['a', 'b'] }, { required: true }))).toEqual(['a', 'b']);
  });

  it('fall back to a text input when the options do not fit a Slack menu', () => {
    const many = Array.from({ length: 150 }, (_, index) => `option-${index}`);
    expect(elementFor({ type: 'string', enum: many }, { value: 'option-120' })).toMatchObject({ type: 'plain_text_input', initial_value: 'option-120' });
    expect(elementFor({ type: 'string', enum: ['short', 'y'.repeat(80)] }, { value: 'short' })).toMatchObject({ type: 'plain_text_input' });
  });
});

describe('numbers', () => {
  it('are number inputs with bounds and value as strings', () => {
    expect(elementFor({ type: 'integer', minimum: 0, maximum: 50 }, { value: 3 })).toEqual({
      type: 'number_input',
      action_id: expect.any(String),
      is_decimal_allowed: false,
      initial_value: '3',
      min_value: '0',
      max_value: '50',
    });
    expect(elementFor({ type: 'number', minimum: 0.5 }, { value: 2.25 })).toMatchObject({ is_decimal_allowed: true, min_value: '0.5', initial_value: '2.25' });
  });

  it('leave out bounds the proposed value already breaks, for the parser to report', () => {
    expect(elementFor({ type: 'integer', minimum: 0, maximum: 50 }, { value: 80 })).toEqual({
      type: 'number_input',
      action_id: expect.any(String),
      is_decimal_allowed: false,
      initial_value: '80',
      min_value: '0',
    });
  });
});

describe('booleans', () => {
  it('are one checkbox, checked for true', () => {
    const checked = elementFor({ type: 'boolean' }, { value: true });
    expect(checked).toMatchObject({ type: 'checkboxes', options: [{ text: { text: 'Yes' }, value: 'true' }], initial_options: [{ value: 'true' }] });
    expect(elementFor({ type: 'boolean' }, { value: false })).not.toHaveProperty('initial_options');
  });

  it('are Yes / No / (none) when they may be null', () => {
    expect(optionTexts(elementFor({ type: ['boolean', 'null'] }, { value: null }))).toEqual(['Yes', 'No', '(none)']);
  });

  it('never make Slack insist on ticking the box', () => {
    expect(inputBlockAt(form({ wait: { type: 'boolean' } }, { required: ['wait'] }), 'wait').optional).toBe(true);
  });
});

describe('arrays', () => {
  it('of a few enum strings are checkboxes', () => {
    const element = elementFor({ type: 'array', items: { type: 'string', enum: ['wait', 'dry_run'] } }, { value: ['dry_run'] });
    expect(element).toMatchObject({ type: 'checkboxes', initial_options: [{ text: { text: 'dry_run' } }] });
    expect(optionTexts(element)).toEqual(['wait', 'dry_run']);
  });

  it('of many enum strings are a multi-select limited to maxItems', () => {
    const regions = Array.from({ length: 12 }, (_, index) => `region-${index}`);
    expect(elementFor({ type: 'array', items: { enum: regions }, maxItems: 3 }, { value: ['region-1', 'region-4'] })).toMatchObject({
      type: 'multi_static_select',
      max_selected_items: 3,
      initial_options: [{ text: { text: 'region-1' } }, { text: { text: 'region-4' } }],
    });
  });

  it('of strings or numbers are one item per line', () => {
    expect(elementFor({ type: 'array', items: { type: 'string' } }, { value: ['a.example.com', 'b.example.com'] })).toMatchObject({
      type: 'plain_text_input',
      multiline: true,
      initial_value: 'a.example.com\nb.example.com',
    });
    expect(elementFor({ type: 'array', items: { type: 'integer' } }, { value: [80, 443] })).toMatchObject({ initial_value: '80\n443' });
  });
});

describe('optional, nullable and default values', () => {
  it('mark inputs optional unless a value is required', () => {
    const built = form(
      { name: { type: 'string', minLength: 1 }, note: { type: 'string' }, owner: { type: ['string', 'null'] }, count: { type: 'integer' } },
      { required: ['name', 'owner', 'count'] },
    );
    expect(['name', 'note', 'owner', 'count'].map((name) => inputBlockAt(built, name).optional)).toEqual([false, true, true, false]);
  });

  it('prefill the default when the value has none, and say what it is', () => {
    const built = form({ replicas: { type: 'integer', default: 3, description: 'Pods to run' } }, { initialValue: {} });
    const block = inputBlockAt(built, 'replicas');
    expect(block.element).toMatchObject({ initial_value: '3' });
    expect(block.hint?.text).toBe('Pods to run · Default: 3');
  });

  it('show the proposed value rather than the default', () => {
    expect(elementFor({ type: 'integer', default: 3 }, { value: 5 })).toMatchObject({ initial_value: '5' });
  });
});

describe('objects', () => {
  const nested: JsonSchema = {
    type: 'object',
    properties: {
      resources: {
        type: 'object',
        properties: {
          limits: { type: 'object', properties: { cpu: { type: 'string' }, memory: { type: 'string' } } },
          labels: { type: 'object', properties: { team: { type: 'object', properties: { name: { type: 'string' } } } } },
        },
      },
    },
  };

  it('group their fields under a heading with dotted labels, two levels deep', () => {
    const built = buildSchemaForm({ schema: nested, initialValue: { resources: { limits: { cpu: '500m' } } } });
    expect(built.blocks.map((block) => [block.type, labelOf(block)])).toEqual([
      ['header', 'Resources'],
      ['context', 'resources.limits'],
      ['input', 'resources.limits.cpu'],
      ['input', 'resources.limits.memory'],
      ['context', 'resources.labels'],
      ['input', 'resources.labels.team (JSON)'],
    ]);
    expect(inputBlockAt(built, 'resources.limits.cpu').element).toMatchObject({ initial_value: '500m' });
  });

  it('edit anything deeper, or without a fixed shape, as pretty JSON', () => {
    const built = buildSchemaForm({ schema: nested, initialValue: { resources: { labels: { team: { name: 'payments' } } } } });
    expect(inputBlockAt(built, 'resources.labels.team').element).toMatchObject({ multiline: true, initial_value: '{\n  "name": "payments"\n}' });
    const unrepresentable: Record<string, JsonSchema> = {
      choice: { oneOf: [{ type: 'string' }, { type: 'number' }] },
      either: { anyOf: [{ type: 'string' }, { type: 'integer' }] },
      map: { type: 'object', additionalProperties: { type: 'string' } },
      anything: { type: 'object' },
      tuple: { type: 'array', items: [{ type: 'string' }, { type: 'number' }] },
      people: { type: 'array', items: { type: 'object', properties: { name: { type: 'string' } } } },
      remote: { $ref: 'https://example.com/schema.json' },
      mixed: { type: ['string', 'number'] },
    };
    const all = form(unrepresentable);
    for (const name of Object.keys(unrepresentable)) {
      expect(all.fields.find((field) => field.path[0] === name)?.control.kind, name).toBe('json');
    }
  });

  it('follow local $refs', () => {
    const built = buildSchemaForm({
      schema: { type: 'object', properties: { size: { $ref: '#/definitions/size' } }, definitions: { size: { type: 'string', enum: ['s', 'm', 'l'] } } },
    });
    expect(inputBlockAt(built, 'size').element.type).toBe('radio_buttons');
  });
});

describe('labels and ids', () => {
  it('come from the title or the humanised property name, with the description as hint', () => {
    const built = form({ max_replicas: { type: 'integer', description: 'Upper bound' }, dryRunURL: { type: 'string' }, ns: { type: 'string', title: 'Namespace' } });
    expect(built.blocks.map(labelOf)).toEqual(['Max replicas', 'Dry run URL', 'Namespace']);
    expect(inputBlockAt(built, 'max_replicas').hint?.text).toBe('Upper bound');
  });

  it('keep long titles and descriptions within Slack’s limits', () => {
    const built = form({ ['p'.repeat(400)]: { type: 'string', title: 'T'.repeat(3000), description: 'D'.repeat(5000), default: 'x'.repeat(500) } });
    expect(findBlockKitViolations(built.blocks, { surface: 'modal' })).toEqual([]);
    expect(labelOf(built.blocks[0])!.length).toBeLessThanOrEqual(150);
  });

  it('are short block ids that depend only on the schema', () => {
    const properties = { ['a'.repeat(300)]: { type: 'string' }, 'with spaces & symbols': { type: 'integer' } } satisfies Record<string, JsonSchema>;
    const empty = form(properties);
    const filled = form(properties, { initialValue: { ['a'.repeat(300)]: 'x', 'with spaces & symbols': 4 } });
    expect(empty.blocks.map((block) => block.block_id)).toEqual(['f:0', 'f:1']);
    expect(filled.blocks.map((block) => block.block_id)).toEqual(['f:0', 'f:1']);
    expect(buildSchemaForm({ schema: { type: 'object', properties }, blockIdPrefix: 'ask' }).blocks.map((block) => block.block_id)).toEqual(['ask:0', 'ask:1']);
    expect(buildSchemaFields({ schema: { type: 'object', properties } }).map((field) => field.blockId)).toEqual(['f:form', 'f:0', 'f:1']);
  });
});

describe('schemas that are not objects', () => {
  it('are one field for the whole value', () => {
    const built = buildSchemaForm({ schema: { type: 'string', enum: ['yes', 'no'], title: 'Proceed?' }, initialValue: 'no' });
    expect(built.blocks).toHaveLength(1);
    expect(built.blocks[0]).toMatchObject({ type: 'input', label: { text: 'Proceed?' }, element: { type: 'radio_buttons', initial_option: { text: { text: 'no' } } } });
  });
});

describe('zod tool schemas', () => {
  it('map the JSON Schema the model sees', async () => {
    const schema = await asSchema(
      zodSchema(
        z.object({
          namespace: z.enum(['staging', 'production']).describe('Target namespace'),
          replicas: z.int().min(0).max(50).default(3),
          notify: z.email().optional(),
          window: z.iso.datetime().optional(),
          reason: z.string().nullable(),
        }),
      ),
    ).jsonSchema;
    const built = buildSchemaForm({ schema, initialValue: { namespace: 'staging', reason: null } });
    expect(built.blocks.map((block) => [labelOf(block), block.type === 'input' ? block.element.type : block.type, block.type === 'input' && block.optional])).toEqual([
      ['Namespace', 'radio_buttons', false],
      ['Replicas', 'number_input', true],
      ['Notify', 'email_text_input', true],
      ['Window', 'datetimepicker', true],
      ['Reason', 'plain_text_input', true],
    ]);
  });
});

function labelOf(block: SchemaForm['blocks'][number] | undefined): string | undefined {
  if (block?.type === 'input') return block.label.text;
  if (block?.type === 'header') return block.text.text;
  if (block?.type === 'context') return (block.elements[0] as { text: string }).text;
  return undefined;
}
