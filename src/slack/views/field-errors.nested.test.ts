import { describe, expect, it } from 'vitest';
import { createJsonSchemaValidator, type JsonSchemaIssue } from '../../tools/json-schema-validator.js';
import { buildSchemaForm, parseSchemaForm } from '../modals/schema-form.js';
import { inputBlockAt, stateFromInput } from '../modals/view-state.test-support.js';
import { inputFieldsOf, issuesToFieldErrors } from './field-errors.js';

describe('a server-side issue about a nested object', () => {
  it('is shown under that object`s fields, naming it, not under an unrelated first field', () => {
    // An MCP tool: the rollout window needs both ends or neither (draft-07 `dependencies`).
    const schema = {
      type: 'object',
      properties: {
        service: { type: 'string' },
        window: { type: 'object', properties: { start: { type: 'string' }, end: { type: 'string' } }, dependencies: { start: ['end'] } },
      },
      required: ['service'],
    } as const;
    const original = { service: 'api', window: { start: '06:00', end: '07:00' } };
    const form = buildSchemaForm({ schema: schema as never, initialValue: original });
    // The approver empties "window.end" only.
    const parsed = parseSchemaForm({ form, stateValues: stateFromInput(form, { service: 'api', window: { start: '06:00' } }) as never });
    expect(parsed).toEqual({ ok: true, value: { service: 'api', window: { start: '06:00' } } });
    const validated = createJsonSchemaValidator().validate(schema as never, (parsed as { value: unknown }).value);
    expect(validated.success).toBe(false);
    const errors = issuesToFieldErrors((validated as { success: false; issues: JsonSchemaIssue[] }).issues, inputFieldsOf(form));
    const serviceBlock = inputBlockAt(form, 'service').block_id!;
    // Where the message lands, and whether it says which object it is about.
    expect({ onService: errors[serviceBlock], namesWindow: Object.values(errors).some((message) => message.includes('window')) }).toEqual({ onService: undefined, namesWindow: true });
  });
});
