import { describe, expect, it } from 'vitest';
import type { JsonSchemaDefinition } from './json-schema.js';
import { createSchemaReader } from './schema-shape.js';

const describeAlone = (schema: JsonSchemaDefinition) => createSchemaReader(schema)(schema);

describe('createSchemaReader', () => {
  it('recognises every spelling of "may be null"', () => {
    for (const schema of [
      { type: ['string', 'null'] },
      { anyOf: [{ type: 'string' }, { type: 'null' }] },
      { oneOf: [{ type: 'null' }, { type: 'string' }] },
      { type: 'string', nullable: true },
    ]) {
      expect(describeAlone(schema), JSON.stringify(schema)).toMatchObject({ kind: 'string', nullable: true });
    }
    expect(describeAlone({ type: 'string', enum: ['a', null] })).toEqual({ kind: 'enum', values: ['a'], nullable: false });
  });

  it('knows null is allowed where the rest is a JSON field or null is an enum value', () => {
    // pydantic's `int | str | None`, and a union with a nested nullable one.
    expect(describeAlone({ anyOf: [{ type: 'integer' }, { type: 'string' }, { type: 'null' }] })).toMatchObject({ kind: 'json', nullable: true });
    expect(describeAlone({ oneOf: [{ anyOf: [{ type: 'integer' }, { type: 'string' }, { type: 'null' }] }] })).toMatchObject({ kind: 'json', nullable: true });
    expect(describeAlone({ anyOf: [{ type: 'integer' }, { type: 'string' }] })).toMatchObject({ kind: 'json', nullable: false });
    expect(describeAlone({ enum: ['fast', 'safe', null] })).toMatchObject({ kind: 'enum', values: ['fast', 'safe'], nullable: true });
    expect(describeAlone({ const: null })).toMatchObject({ kind: 'json', nullable: true });
  });

  it('keeps a description written next to anyOf or $ref', () => {
    expect(describeAlone({ anyOf: [{ type: 'integer', minimum: 1 }, { type: 'null' }], description: 'Pods' })).toMatchObject({
      kind: 'number',
      integer: true,
      minimum: 1,
      nullable: true,
      description: 'Pods',
    });
    const root = { $defs: { size: { type: 'string', enum: ['s', 'm'] } }, $ref: '#/$defs/size', title: 'Size' };
    expect(describeAlone(root)).toMatchObject({ kind: 'enum', values: ['s', 'm'], title: 'Size' });
  });

  it('reads draft-04 boolean exclusive bounds', () => {
    expect(describeAlone({ type: 'number', minimum: 0, exclusiveMinimum: true })).toMatchObject({ exclusiveMinimum: 0, minimum: undefined });
  });

  it('gives up on what a form cannot hold, without looping on recursive references', () => {
    for (const schema of [
      true,
      { anyOf: [{ type: 'string' }, { type: 'number' }] },
      { allOf: [{ type: 'string' }, { minLength: 2 }] },
      { $ref: '#/definitions/missing' },
      { $ref: '#/definitions/a', definitions: { a: { $ref: '#/definitions/a' } } },
      { type: 'array', items: { type: ['string', 'null'] } },
      { enum: [{ a: 1 }] },
      { type: 'null' },
    ] as JsonSchemaDefinition[]) {
      expect(describeAlone(schema).kind, JSON.stringify(schema)).toBe('json');
    }
    const recursive = { type: 'object', properties: { child: { $ref: '#' } } };
    expect(describeAlone(recursive)).toMatchObject({ kind: 'object', properties: [{ name: 'child', required: false }] });
  });

  it('ignores keywords of the wrong type', () => {
    expect(describeAlone({ type: 'string', minLength: '3', maxLength: -1, pattern: 42 } as never)).toEqual({
      kind: 'string',
      nullable: false,
      format: undefined,
      minLength: undefined,
      maxLength: undefined,
      pattern: undefined,
    });
  });
});
