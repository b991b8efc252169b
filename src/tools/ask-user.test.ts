import type { JSONSchema7 } from 'ai';
import { describe, expect, it } from 'vitest';
import { answerSchemaOf } from './ask-user.js';

const usable = () => true;
const schemaFor = (answerSchema: JSONSchema7) => answerSchemaOf({ question: 'Which service?', answerSchema: answerSchema as Record<string, unknown> }, usable);
const isFreeText = (schema: JSONSchema7) => Object.keys(schema.properties ?? {}).join() === 'answer';

describe('answerSchemaOf: a schema no submit of its form could satisfy is replaced by free text', () => {
  const target = (inner: JSONSchema7): JSONSchema7 => ({ type: 'object', properties: { target: inner }, required: ['target'] });

  it('when an object requires a property it does not list, at the top or nested', () => {
    expect(isFreeText(schemaFor({ type: 'object', properties: { reason: { type: 'string' } }, required: ['answer'] }))).toBe(true);
    expect(isFreeText(schemaFor(target({ type: 'object', properties: { service: { type: 'string' } }, required: ['name'] })))).toBe(true);
    const nullable: JSONSchema7 = { anyOf: [{ type: 'object', properties: { service: { type: 'string' } }, required: ['name'] }, { type: 'null' }] };
    expect(isFreeText(schemaFor(target(nullable)))).toBe(true);
  });

  it('not when every required property is listed, or a nested object is typed as JSON (any key can be given)', () => {
    const listed = target({ type: 'object', properties: { name: { type: 'string' } }, required: ['name'] });
    expect(schemaFor(listed)).toBe(listed);
    const map = target({ type: 'object', properties: { service: { type: 'string' } }, additionalProperties: { type: 'string' }, required: ['name'] });
    expect(schemaFor(map)).toBe(map);
    const unlisted = target({ type: 'object', required: ['name'] });
    expect(schemaFor(unlisted)).toBe(unlisted);
  });
});
