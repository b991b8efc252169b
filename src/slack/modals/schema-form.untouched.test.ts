import { describe, expect, it } from 'vitest';
import type { JsonSchema } from './json-schema.js';
import { buildSchemaForm, parseSchemaForm } from './schema-form.js';
import { stateFromBlocks, stateFromInput } from './view-state.test-support.js';

/** The approver opens Edit and submits without touching anything; the value must come back as it was. */
function submittedUntouched(schema: JsonSchema, input: unknown): unknown {
  const form = buildSchemaForm({ schema, initialValue: input });
  const result = parseSchemaForm({ form, stateValues: stateFromBlocks(form.blocks) });
  return result.ok ? result.value : result;
}

describe('values the approver did not touch', () => {
  it('an object holding only keys the schema does not list (shown as "kept unchanged") is kept', () => {
    const schema: JsonSchema = { type: 'object', properties: { pod: { type: 'string' }, metadata: { type: 'object', properties: { owner: { type: 'string' } } } } };
    expect(submittedUntouched(schema, { pod: 'api-1', metadata: { team: 'payments' } })).toEqual({ pod: 'api-1', metadata: { team: 'payments' } });
  });

  it('… also when the object may be null (it does not become null)', () => {
    const schema: JsonSchema = { type: 'object', properties: { metadata: { type: ['object', 'null'], properties: { owner: { type: 'string' } } } } };
    expect(submittedUntouched(schema, { metadata: { team: 'payments' } })).toEqual({ metadata: { team: 'payments' } });
  });

  it('an explicit null of a union with null (pydantic `int | str | None = "25%"`) stays null', () => {
    const schema: JsonSchema = { type: 'object', properties: { max_surge: { anyOf: [{ type: 'integer' }, { type: 'string' }, { type: 'null' }], default: '25%' } } };
    expect(submittedUntouched(schema, { max_surge: null })).toEqual({ max_surge: null });
  });

  it('an explicit null in a JSON field shows as `null` and stays null, whatever the schema says of null', () => {
    const schema: JsonSchema = { type: 'object', properties: { limits: {}, shape: { anyOf: [{ type: 'integer' }, { type: 'string' }] } } };
    const form = buildSchemaForm({ schema, initialValue: { limits: null, shape: null } });
    const texts = form.blocks.flatMap((block) => (block.type === 'input' ? [(block.element as { initial_value?: string }).initial_value] : []));
    expect(texts).toEqual(['null', 'null']);
    expect(submittedUntouched(schema, { limits: null, shape: null })).toEqual({ limits: null, shape: null });
  });

  it('an object with unlisted keys and a listed one the approver empties keeps the unlisted keys', () => {
    const schema: JsonSchema = { type: 'object', properties: { metadata: { type: 'object', properties: { owner: { type: 'string' } } } } };
    const form = buildSchemaForm({ schema, initialValue: { metadata: { owner: 'bob', team: 'payments' } } });
    const result = parseSchemaForm({ form, stateValues: stateFromInput(form, { metadata: {} }) });
    expect(result).toEqual({ ok: true, value: { metadata: { team: 'payments' } } });
  });

  it('… and when the approver empties that box it is null again, not left out for the server`s default', () => {
    const schema: JsonSchema = { type: 'object', properties: { max_surge: { anyOf: [{ type: 'integer' }, { type: 'string' }, { type: 'null' }], default: '25%' } } };
    const form = buildSchemaForm({ schema, initialValue: { max_surge: null } });
    const stateValues = stateFromBlocks(form.blocks);
    for (const actions of Object.values(stateValues)) for (const state of Object.values(actions)) state.value = null;
    expect(parseSchemaForm({ form, stateValues })).toEqual({ ok: true, value: { max_surge: null } });
  });

  it('strings with bidi overrides or zero-width characters are shown as JSON with them escaped, and come back unchanged', () => {
    const schema: JsonSchema = { type: 'object', properties: { command: { type: 'string' }, hosts: { type: 'array', items: { type: 'string' } }, mode: { enum: ['fast', 'safe'] } } };
    const input = { command: 'echo hi\u202E/ fr- mr', hosts: ['db\u200B1', 'db2'], mode: 'sa\u2066fe' };
    const form = buildSchemaForm({ schema, initialValue: input });
    const texts = form.blocks.flatMap((block) => (block.type === 'input' ? [(block.element as { initial_value?: string }).initial_value] : []));
    expect(texts).toEqual(['"echo hi\\u202e/ fr- mr"', '[\n  "db\\u200b1",\n  "db2"\n]', '"sa\\u2066fe"']);
    // The value off the enum is refused on submit, as any such value is; the others come back as they were.
    expect(submittedUntouched(schema, { command: input.command, hosts: input.hosts })).toEqual({ command: input.command, hosts: input.hosts });
  });

  it('a key the model wrote with a bidi override is named with it escaped in the "kept unchanged" note', () => {
    const schema: JsonSchema = { type: 'object', properties: { metadata: { type: 'object', properties: { owner: { type: 'string' } } } } };
    const form = buildSchemaForm({ schema, initialValue: { metadata: { 'gnitsoh\u202Eteam': 'payments' } } });
    const text = JSON.stringify(form.blocks);
    expect(text).toContain('Not in the form, kept unchanged: metadata.gnitsoh\\\\u202eteam');
    expect(text).not.toContain('\u202E');
  });

  it('an explicit null of an enum that lists null stays null', () => {
    const schema: JsonSchema = { type: 'object', properties: { mode: { enum: ['fast', 'safe', null], default: 'safe' } } };
    expect(submittedUntouched(schema, { mode: null })).toEqual({ mode: null });
  });

  describe('an object parameter whose value is not an object', () => {
    // `properties` without `type` constrains objects only: a string, array or null is valid there.
    const schema: JsonSchema = {
      type: 'object',
      properties: {
        service: { type: 'string' },
        options: { properties: { force: { type: 'boolean' }, limits: { type: 'object', properties: { cpu: { type: 'string' } } } } },
      },
    };
    const blockTexts = (form: ReturnType<typeof buildSchemaForm>) =>
      form.blocks.flatMap((block) => (block.type === 'input' ? [[block.label.text, (block.element as { initial_value?: string }).initial_value]] : []));

    it('is shown as one JSON input instead of the object`s inputs, and comes back as it was', () => {
      for (const options of ['drain-first', [1, 2], null, '', false, 3]) {
        const form = buildSchemaForm({ schema, initialValue: { service: 'api', options } });
        expect(blockTexts(form)).toEqual([['Service', 'api'], ['Options (JSON)', JSON.stringify(options, null, 2)]]);
        expect(submittedUntouched(schema, { service: 'api', options })).toEqual({ service: 'api', options });
      }
    });

    it('… also one level down, while the object around it keeps its inputs', () => {
      const input = { service: 'api', options: { force: true, limits: 'small' } };
      const form = buildSchemaForm({ schema, initialValue: input });
      expect(blockTexts(form).map(([label]) => label)).toEqual(['Service', 'options.force', 'options.limits (JSON)']);
      expect(submittedUntouched(schema, input)).toEqual(input);
    });

    it('takes what the approver writes in its place, an object included', () => {
      const form = buildSchemaForm({ schema, initialValue: { service: 'api', options: 'drain-first' } });
      const stateValues = stateFromBlocks(form.blocks);
      const options = form.blocks.find((block) => block.type === 'input' && block.label.text === 'Options (JSON)');
      for (const state of Object.values(stateValues[options?.block_id ?? ''] ?? {})) state.value = '{"force": true}';
      expect(parseSchemaForm({ form, stateValues })).toEqual({ ok: true, value: { service: 'api', options: { force: true } } });
    });

    it('is kept unchanged when it is too long for an input', () => {
      const input = { service: 'api', options: 'x'.repeat(4_000) };
      const form = buildSchemaForm({ schema, initialValue: input });
      expect(JSON.stringify(form.blocks)).toContain('it is kept unchanged');
      expect(submittedUntouched(schema, input)).toEqual(input);
    });

    it('stays a group of inputs when it is null and the object may be null', () => {
      const nullable: JsonSchema = { type: 'object', properties: { options: { type: ['object', 'null'], properties: { force: { type: 'boolean' } } } } };
      expect(blockTexts(buildSchemaForm({ schema: nullable, initialValue: { options: null } })).map(([label]) => label)).toEqual(['options.force']);
      expect(submittedUntouched(nullable, { options: null })).toEqual({ options: null });
    });
  });
});
