import { describe, expect, it } from 'vitest';
import { createJsonSchemaValidator } from './json-schema-validator.js';

describe('JSON Schema validation of human input', () => {
  const validator = createJsonSchemaValidator();
  const schema = {
    $schema: 'http://json-schema.org/draft-07/schema#',
    type: 'object' as const,
    properties: { email: { type: 'string' as const, format: 'email' }, count: { type: 'integer' as const, minimum: 1 } },
    required: ['email'],
    additionalProperties: false,
  };

  it('accepts a valid value and names the field of each problem otherwise', () => {
    expect(validator.validate(schema, { email: 'ops@example.com', count: 2 })).toEqual({ success: true, value: { email: 'ops@example.com', count: 2 } });
    const result = validator.validate(schema, { email: 'not-an-email', count: 0 });
    expect(result.success).toBe(false);
    expect(!result.success && result.issues.map((issue) => issue.path.join('.'))).toEqual(['email', 'count']);
    const missing = validator.validate(schema, {});
    expect(!missing.success && missing.issues).toEqual([{ path: ['email'], message: 'is required' }]);
  });

  it('reports a broken schema instead of throwing', () => {
    const broken = { type: 'object' as const, properties: { a: { type: 'nonsense' as never } } };
    expect(validator.isUsable(broken)).toBe(false);
    expect(validator.validate(broken, {}).success).toBe(false);
  });
});
