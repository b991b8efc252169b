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

  it('gives array indexes in a path as numbers, and property names that look like numbers as names', () => {
    const lists = { type: 'object' as const, properties: { hosts: { type: 'array' as const, items: { type: 'string' as const } }, ports: { type: 'object' as const, additionalProperties: { type: 'integer' as const } } } };
    const result = validator.validate(lists, { hosts: ['a', 'b', 3], ports: { '2': 'http' } });
    expect(!result.success && result.issues.map((issue) => issue.path)).toEqual([['hosts', 2], ['ports', '2']]);
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
  describe('schemas with an `$id` (models write complete schemas; MCP tools may share one)', () => {
    const replicas = { $id: 'answer', type: 'object' as const, properties: { replicas: { type: 'integer' as const, minimum: 1 } }, required: ['replicas'] };

    it('are validated against themselves every time they are read, and beside another schema with the same `$id`', () => {
      const validator = createJsonSchemaValidator();
      // Each read of a step (or a tools/list) is a new object with the same schema.
      expect(validator.isUsable(structuredClone(replicas))).toBe(true);
      expect(validator.validate(structuredClone(replicas), { replicas: 3 })).toEqual({ success: true, value: { replicas: 3 } });
      const other = { $id: 'answer', type: 'object' as const, properties: { name: { type: 'string' as const } }, required: ['name'] };
      expect(validator.validate(other, { name: 'worker' }).success).toBe(true);
      expect(validator.validate(other, { replicas: 3 })).toEqual({ success: false, issues: [{ path: ['name'], message: 'is required' }] });
      expect(validator.validate(structuredClone(replicas), { replicas: 0 }).success).toBe(false);
    });

    it('nested, and referred to, in two schemas', () => {
      const validator = createJsonSchemaValidator();
      const schemaWith = (type: 'string' | 'integer') => ({
        type: 'object' as const,
        properties: { target: { $id: 'target', type } as never, again: { $ref: 'target' } },
      });
      expect(validator.validate(schemaWith('string'), { target: 'a', again: 'b' }).success).toBe(true);
      expect(validator.validate(schemaWith('integer'), { target: 1, again: 2 }).success).toBe(true);
      expect(validator.validate(schemaWith('integer'), { target: 1, again: 'b' }).success).toBe(false);
    });

    it('stay right however many schemas came and went', () => {
      const validator = createJsonSchemaValidator({ maxCompiled: 3 });
      for (let minimum = 0; minimum < 20; minimum += 1) {
        const schema = { $id: 'answer', type: 'integer' as const, minimum };
        expect(validator.validate(schema, minimum).success).toBe(true);
        expect(validator.validate(schema, minimum - 1).success).toBe(false);
        expect(validator.validate(replicas, { replicas: 2 }).success).toBe(true);
      }
    });
  });
});
