import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { cachedSchema } from './cached-schema.js';

describe('cachedSchema', () => {
  it('converts a zod schema to JSON Schema once, and still validates with zod', async () => {
    const input = z.object({ service: z.string().regex(/^[a-z-]+$/) });
    const first = cachedSchema(input);
    expect(cachedSchema(input)).toBe(first);
    expect(first.jsonSchema).toBe(cachedSchema(input).jsonSchema);
    expect(first.jsonSchema).toMatchObject({ type: 'object', properties: { service: { type: 'string' } } });
    expect(await first.validate?.({ service: 'api' })).toMatchObject({ success: true });
    expect(await first.validate?.({ service: 'rm -rf' })).toMatchObject({ success: false });
  });
});
