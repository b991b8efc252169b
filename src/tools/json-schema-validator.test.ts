import { describe, expect, it } from 'vitest';
import { interruptIfStuck } from '../../test/helpers/interrupt-if-stuck.js';
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

  describe("patterns (an MCP server's schema, checked against the model's input)", () => {
    it('are checked against 3,000 characters without catastrophic backtracking, in values and in property names', () => {
      const hostile = {
        type: 'object' as const,
        properties: { name: { type: 'string' as const, pattern: '^(a+)+$' } },
        patternProperties: { '^(a+)+$': { type: 'string' as const } },
        additionalProperties: false,
      };
      const attack = `${'a'.repeat(2999)}!`;
      const result = interruptIfStuck(() => validator.validate(hostile, { name: attack, [attack]: 'x' }));
      expect(!result.success && result.issues).toEqual([
        { path: [], message: 'must NOT have additional properties' },
        { path: ['name'], message: 'must match pattern "^(a+)+$"' },
      ]);
      expect(validator.validate(hostile, { name: 'aaa', aaaa: 'x' }).success).toBe(true);
    });

    it('that the linear engine cannot run are not checked, the rest of the schema is; a pattern that is not one breaks the schema', () => {
      const lookahead = { type: 'object' as const, properties: { user: { type: 'string' as const, pattern: '^(?!admin$)', maxLength: 5 } } };
      expect(validator.validate(lookahead, { user: 'admin' }).success).toBe(true);
      expect(validator.validate(lookahead, { user: 'administrator' })).toEqual({ success: false, issues: [{ path: ['user'], message: 'must NOT have more than 5 characters' }] });
      expect(validator.isUsable({ type: 'string', pattern: '(unclosed' })).toBe(false);
    });
  });
});
