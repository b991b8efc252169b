import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import type { ParameterConfig } from './parameter-config.js';
import { parametersToZodSchema } from './parameters-schema.js';

const string = (extra: Partial<Extract<ParameterConfig, { type: 'string' }>> = {}): ParameterConfig => ({
  type: 'string',
  optional: false,
  allowLeadingDash: false,
  ...extra,
});

describe('parametersToZodSchema', () => {
  it('validates strings against enum, pattern and length', () => {
    const schema = parametersToZodSchema({
      namespace: string({ enum: ['staging', 'prod'] }),
      service: string({ pattern: '[a-z0-9-]+', minLength: 2, maxLength: 10 }),
    });
    expect(schema.parse({ namespace: 'prod', service: 'api-1' })).toEqual({ namespace: 'prod', service: 'api-1' });
    expect(schema.safeParse({ namespace: 'dev', service: 'api' }).success).toBe(false);
    expect(schema.safeParse({ namespace: 'prod', service: 'a' }).success).toBe(false);
    expect(schema.safeParse({ namespace: 'prod', service: 'much-too-long' }).success).toBe(false);
  });

  it('anchors the pattern, so it must match the whole value', () => {
    const schema = parametersToZodSchema({ service: string({ pattern: '[a-z]+' }) });
    expect(schema.safeParse({ service: 'api' }).success).toBe(true);
    expect(schema.safeParse({ service: 'api; rm -rf /' }).success).toBe(false);
  });

  it('rejects a leading dash unless allowed, so the model cannot inject options', () => {
    const strict = parametersToZodSchema({ name: string() });
    const result = strict.safeParse({ name: '--all' });
    expect(result.success).toBe(false);
    expect(result.error?.issues[0]?.message).toBe('must not start with "-"');

    const lenient = parametersToZodSchema({ offset: string({ allowLeadingDash: true }) });
    expect(lenient.parse({ offset: '-5m' })).toEqual({ offset: '-5m' });
  });

  it.each(['a\nb', 'a\rb', 'a\0b'])('rejects %j (line breaks and NUL)', (value) => {
    expect(parametersToZodSchema({ name: string() }).safeParse({ name: value }).success).toBe(false);
  });

  it('validates numbers, integers and ranges', () => {
    const schema = parametersToZodSchema({
      replicas: { type: 'number', integer: true, minimum: 0, maximum: 50, optional: false, allowLeadingDash: false },
      ratio: { type: 'number', integer: false, optional: false, allowLeadingDash: false },
    });
    expect(schema.parse({ replicas: 3, ratio: 0.5 })).toEqual({ replicas: 3, ratio: 0.5 });
    expect(schema.safeParse({ replicas: 1.5, ratio: 0 }).success).toBe(false);
    expect(schema.safeParse({ replicas: 51, ratio: 0 }).success).toBe(false);
    expect(schema.safeParse({ replicas: '3', ratio: 0 }).success).toBe(false);
  });

  it('applies defaults and allows optional parameters to be left out', () => {
    const schema = parametersToZodSchema({
      namespace: string({ enum: ['staging', 'prod'], default: 'staging' }),
      dryRun: { type: 'boolean', default: false, optional: false },
      selector: string({ optional: true }),
    });
    expect(schema.parse({})).toEqual({ namespace: 'staging', dryRun: false });
    expect(schema.safeParse({ dryRun: 'yes' }).success).toBe(false);
  });

  it('refuses parameters that do not exist', () => {
    expect(parametersToZodSchema({ name: string() }).safeParse({ name: 'a', force: true }).success).toBe(false);
  });

  it('gives the model each description, default and constraint in the JSON schema', () => {
    const schema = parametersToZodSchema({
      service: string({ description: 'Deployment name', pattern: '[a-z]+' }),
      namespace: string({ enum: ['staging', 'prod'], default: 'staging', description: 'Namespace' }),
    });
    expect(z.toJSONSchema(schema, { io: 'input' })).toMatchObject({
      type: 'object',
      properties: {
        service: { type: 'string', description: 'Deployment name', pattern: '^(?:[a-z]+)$' },
        namespace: { enum: ['staging', 'prod'], default: 'staging', description: 'Namespace' },
      },
      required: ['service'],
      additionalProperties: false,
    });
  });
});
