import { describe, expect, it } from 'vitest';
import { createJsonSchemaValidator, type JsonSchemaIssue } from '../../tools/json-schema-validator.js';
import { buildSchemaForm, parseSchemaForm } from '../modals/schema-form.js';
import { inputBlockAt, stateFromInput } from '../modals/view-state.test-support.js';
import { inputFieldsOf, issuesToFieldErrors } from './field-errors.js';

// An MCP tool whose nested object has `properties` but no `type`: any value is valid there, so the
// model's string reached the card, and the Edit form shows `config` as one JSON input (showsGroupAsJson).
const schema = {
  type: 'object',
  properties: {
    service: { type: 'string' },
    config: { properties: { replicas: { type: 'integer' } }, required: ['replicas'] },
  },
  required: ['service'],
} as const;

function configBlockOf(form: ReturnType<typeof buildSchemaForm>): string {
  const blockId = form.fields.find((field) => field.path.join('.') === 'config')!.blockId;
  // The group is shown as one JSON input block (same block id).
  expect(form.inputBlockIds).toContain(blockId);
  return blockId;
}

function serverErrors(form: ReturnType<typeof buildSchemaForm>, submitted: unknown) {
  const parsed = parseSchemaForm({ form, stateValues: stateFromInput(form, submitted) as never });
  expect(parsed.ok).toBe(true);
  const validated = createJsonSchemaValidator().validate(schema as never, (parsed as { value: unknown }).value);
  expect(validated.success).toBe(false);
  return issuesToFieldErrors((validated as { success: false; issues: JsonSchemaIssue[] }).issues, inputFieldsOf(form));
}

describe('a server-side issue inside a nested object shown as one JSON input', () => {
  it('is shown under that JSON input, not under an unrelated field', () => {
    const form = buildSchemaForm({ schema: schema as never, initialValue: { service: 'api', config: 'oops' } });
    const configBlock = configBlockOf(form);
    const serviceBlock = inputBlockAt(form, 'service').block_id!;
    // The approver turns the string into an object but forgets `replicas`.
    const errors = serverErrors(form, { service: 'api', config: {} });
    expect({ onConfig: errors[configBlock], onService: errors[serviceBlock] }).toEqual({ onConfig: expect.stringContaining('replicas'), onService: undefined });
  });

  it('is shown at all when that JSON input is the only input (an empty errors object closes nothing and shows nothing)', () => {
    const only = { type: 'object', properties: { config: schema.properties.config }, required: ['config'] } as const;
    const form = buildSchemaForm({ schema: only as never, initialValue: { config: 'oops' } });
    const parsed = parseSchemaForm({ form, stateValues: stateFromInput(form, { config: {} }) as never });
    expect(parsed.ok).toBe(true);
    const validated = createJsonSchemaValidator().validate(only as never, (parsed as { value: unknown }).value);
    expect(validated.success).toBe(false);
    const errors = issuesToFieldErrors((validated as { success: false; issues: JsonSchemaIssue[] }).issues, inputFieldsOf(form));
    expect(Object.keys(errors)).toEqual([configBlockOf(form)]);
  });
});
