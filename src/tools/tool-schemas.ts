import { asSchema, type JSONSchema7 } from 'ai';
import type { ZodType } from 'zod';
import { createJsonSchemaValidator, type JsonSchemaIssue, type JsonSchemaValidation } from './json-schema-validator.js';
import type { ToolDefinition } from './tool-definition.js';

export interface ToolSchemas {
  /** The JSON Schema the model saw for this tool (draft-07, as the AI SDK sends it). */
  jsonSchema(toolName: string): Promise<JSONSchema7 | undefined>;
  /**
   * Validates a human's input for a tool on the server: zod tools with their own schema (so
   * refinements and defaults apply), schema-only tools with ajv, since the AI SDK checks neither.
   */
  validate(toolName: string, value: unknown): Promise<JsonSchemaValidation>;
  /**
   * What `validate` checks this tool's input with: `zod`, or `json-schema` (ajv with ajv-formats,
   * which reads `format` as RFC 3339 does: a `time` has seconds and a time zone). Undefined for a
   * tool that is not available.
   */
  validatedWith(toolName: string): 'zod' | 'json-schema' | undefined;
}

export function createToolSchemas({ definitions }: { definitions: readonly ToolDefinition[] }): ToolSchemas {
  // Looked up on every call: `definitions` may be the live list from loadTools (MCP tools come and
  // go, and a reconnect can change a tool's schema), so schemas are cached per definition object.
  const find = (toolName: string) => definitions.find((definition) => definition.name === toolName);
  const jsonSchemas = new WeakMap<ToolDefinition, Promise<JSONSchema7>>();
  const validator = createJsonSchemaValidator();

  async function jsonSchema(toolName: string): Promise<JSONSchema7 | undefined> {
    const definition = find(toolName);
    if (!definition) return undefined;
    let schema = jsonSchemas.get(definition);
    if (!schema) {
      schema = Promise.resolve(asSchema(definition.inputSchema).jsonSchema);
      jsonSchemas.set(definition, schema);
    }
    return schema;
  }

  return {
    jsonSchema,
    validatedWith(toolName) {
      const definition = find(toolName);
      if (!definition) return undefined;
      return isZodSchema(definition.inputSchema) ? 'zod' : 'json-schema';
    },
    async validate(toolName, value) {
      const definition = find(toolName);
      if (!definition) return { success: false, issues: [{ path: [], message: `the tool ${toolName} is not available any more` }] };
      if (isZodSchema(definition.inputSchema)) {
        const parsed = definition.inputSchema.safeParse(value);
        if (parsed.success) return { success: true, value: parsed.data };
        return {
          success: false,
          issues: parsed.error.issues.map((issue): JsonSchemaIssue => ({ path: issue.path.filter(isPathSegment), message: issue.message })),
        };
      }
      const schema = await jsonSchema(toolName);
      return schema ? validator.validate(schema, value) : { success: false, issues: [{ path: [], message: 'no schema' }] };
    },
  };
}

/** A zod schema parses: what it returns has its defaults and transforms applied. */
export function isZodSchema(schema: unknown): schema is ZodType {
  return typeof schema === 'object' && schema !== null && typeof (schema as { safeParse?: unknown }).safeParse === 'function';
}

function isPathSegment(segment: PropertyKey): segment is string | number {
  return typeof segment === 'string' || typeof segment === 'number';
}
