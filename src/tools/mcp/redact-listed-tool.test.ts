import { describe, expect, it } from 'vitest';
import { createRedactor } from '../http/redact.js';
import { redactListedTool } from './redact-listed-tool.js';

const SECRET = 'S3cretDbPassw0rd-7f1c';
const redact = createRedactor([SECRET]);

describe('redactListedTool', () => {
  it('redacts the description, title, annotations and every string of the schema, keeping parameter names', () => {
    const tool = redactListedTool(
      {
        name: 'query',
        title: `db ${SECRET}`,
        description: `Query ${SECRET}`,
        annotations: { title: `t ${SECRET}`, readOnlyHint: true },
        inputSchema: {
          type: 'object',
          properties: { dsn: { type: 'string', description: `d ${SECRET}`, default: SECRET, enum: [SECRET, 'other'], examples: [`x ${SECRET}`] } },
          required: ['dsn'],
        },
      },
      redact,
    );
    expect(JSON.stringify(tool)).not.toContain(SECRET);
    expect(tool.inputSchema).toEqual({
      type: 'object',
      properties: { dsn: { type: 'string', description: 'd [redacted]', default: '[redacted]', enum: ['[redacted]', 'other'], examples: ['x [redacted]'] } },
      required: ['dsn'],
    });
    expect(tool.annotations).toEqual({ title: 't [redacted]', readOnlyHint: true });
    expect(tool.name).toBe('query');
  });
});
