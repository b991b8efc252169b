import { jsonSchema } from 'ai';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { inputWithDefaults } from './input-with-defaults.js';
import type { ToolDefinition } from './tool-definition.js';

const define = (inputSchema: ToolDefinition['inputSchema']): ToolDefinition => ({ name: 'k8s.deploy', description: 'Deploy', inputSchema, execute: async () => 'ok' });

describe('the input the policy judges: the schema defaults filled in', () => {
  // As an MCP server (FastMCP, pydantic) writes `namespace: str = "prod"` and a nested settings model.
  const mcp = define(
    jsonSchema({
      type: 'object',
      properties: {
        service: { type: 'string' },
        namespace: { type: 'string', default: 'prod' },
        rollout: { type: 'object', properties: { strategy: { type: 'string', default: 'all-at-once' }, pause: { type: 'boolean' } }, default: {} },
      },
      required: ['service'],
      additionalProperties: false,
    }),
  );

  it('fills a left-out field and nested defaults, on a copy: what the tool is sent stays as written', async () => {
    const sent = { service: 'api', rollout: { pause: true } };
    expect(await inputWithDefaults(mcp, sent)).toEqual({ service: 'api', namespace: 'prod', rollout: { pause: true, strategy: 'all-at-once' } });
    expect(sent).toEqual({ service: 'api', rollout: { pause: true } });
    // A defaulted object is filled in too, with its own properties' defaults.
    expect(await inputWithDefaults(mcp, { service: 'api' })).toEqual({ service: 'api', namespace: 'prod', rollout: { strategy: 'all-at-once' } });
  });

  it('keeps a value that was written, and an input the schema refuses (it will not run) as it is', async () => {
    expect(await inputWithDefaults(mcp, { service: 'api', namespace: 'staging', rollout: {} })).toEqual({ service: 'api', namespace: 'staging', rollout: { strategy: 'all-at-once' } });
    const refused = { namespace: 7 };
    expect(await inputWithDefaults(mcp, refused)).toBe(refused);
  });

  it('leaves a zod tool input alone (already parsed, defaults applied) and an unknown tool input as sent', async () => {
    const zodTool = define(z.object({ service: z.string(), namespace: z.string().default('prod') }));
    const parsed = { service: 'api', namespace: 'staging' };
    expect(await inputWithDefaults(zodTool, parsed)).toBe(parsed);
    const unknown = { service: 'api' };
    expect(await inputWithDefaults(undefined, unknown)).toBe(unknown);
  });
});
