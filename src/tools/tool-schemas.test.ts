import { describe, expect, it } from 'vitest';
import { jsonSchema } from 'ai';
import { z } from 'zod';
import { createToolSchemas } from './tool-schemas.js';

describe('tool schemas for human edits', () => {
  const schemas = createToolSchemas({
    definitions: [
      {
        name: 'scale',
        description: 'Scale',
        inputSchema: z.object({ namespace: z.enum(['staging', 'prod']), replicas: z.number().int().max(50), force: z.boolean().default(false) }),
        execute: async () => 'ok',
      },
      {
        name: 'mcp.write_file',
        description: 'Write a file (JSON Schema only, like MCP tools)',
        inputSchema: jsonSchema<{ path: string }>({
          type: 'object',
          properties: { path: { type: 'string', minLength: 1 } },
          required: ['path'],
          additionalProperties: false,
        }),
        execute: async () => 'ok',
      },
    ],
  });

  it('gives the JSON Schema the model saw', async () => {
    const schema = await schemas.jsonSchema('scale');
    expect(schema?.properties).toHaveProperty('namespace');
    expect(schema?.required).toEqual(['namespace', 'replicas']);
  });

  it('validates zod tools with zod (defaults applied) and names the failing field', async () => {
    expect(await schemas.validate('scale', { namespace: 'prod', replicas: 3 })).toEqual({ success: true, value: { namespace: 'prod', replicas: 3, force: false } });
    const invalid = await schemas.validate('scale', { namespace: 'dev', replicas: 99 });
    expect(!invalid.success && invalid.issues.map((issue) => issue.path.join('.'))).toEqual(['namespace', 'replicas']);
  });

  it('validates schema-only tools with ajv, which the AI SDK would not do', async () => {
    expect((await schemas.validate('mcp.write_file', { path: '/tmp/x' })).success).toBe(true);
    const invalid = await schemas.validate('mcp.write_file', { path: '', extra: 1 });
    expect(invalid.success).toBe(false);
  });

  it('says which validator checks each tool`s input (ajv reads `format` as RFC 3339)', () => {
    expect(schemas.validatedWith('scale')).toBe('zod');
    expect(schemas.validatedWith('mcp.write_file')).toBe('json-schema');
    expect(schemas.validatedWith('gone')).toBeUndefined();
  });
});
