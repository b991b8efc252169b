import { asSchema, type JSONSchema7 } from 'ai';
import { fillBranchDefaults } from './branch-defaults.js';
import { createJsonSchemaValidator } from './json-schema-validator.js';
import { isZodSchema } from './tool-schemas.js';
import type { ToolDefinition } from './tool-definition.js';

/**
 * A call's input as the tool will act on it: with its schema's `default`s filled in. A JSON-Schema
 * tool (MCP, `jsonSchema()`) gets its input as written, and the server applies the defaults itself
 * (FastMCP writes `namespace: str = "prod"` as `"default": "prod"`), so a rule conditioned on
 * `namespace: prod` must see the default where the model or an approver left the field out, or the
 * prod deploy falls under a laxer rule. A zod tool's input has been parsed already (by the AI SDK,
 * or by `ToolSchemas.validate` for an edit), defaults included, so it is returned as it is.
 *
 * ajv leaves out the defaults inside `anyOf` and `oneOf`, which is how pydantic writes a union of
 * models or an optional model (`target: Deployment | None = None`); `fillBranchDefaults` fills those
 * from the branch the input matches, and where several match and disagree it gives the field the
 * list of their values, which input conditions read as unclear (so the stricter rule decides; a
 * tool's own `approval` function sees that list too).
 *
 * Only the policy's copy gets the defaults: what is sent to the tool, shown on the card and hashed
 * stays what was written. An input the schema refuses (it will not run) or a schema that cannot be
 * read is returned as it is.
 */
export async function inputWithDefaults(definition: ToolDefinition | undefined, input: unknown): Promise<unknown> {
  if (definition === undefined || isZodSchema(definition.inputSchema)) return input;
  const schema = await jsonSchemaOf(definition);
  if (schema === undefined) return input;
  const result = validator.validate(schema, input);
  return result.success ? fillBranchDefaults({ schema, value: result.value, validator }) : input;
}

const validator = createJsonSchemaValidator({ applyDefaults: true });
// Per definition object, as in tool-schemas.ts: a standard schema converts to a new JSON Schema on
// every read, and ajv keeps every schema object it compiles.
const jsonSchemas = new WeakMap<ToolDefinition, Promise<JSONSchema7 | undefined>>();

function jsonSchemaOf(definition: ToolDefinition): Promise<JSONSchema7 | undefined> {
  let schema = jsonSchemas.get(definition);
  if (!schema) {
    schema = (async () => asSchema(definition.inputSchema).jsonSchema)().catch(() => undefined);
    jsonSchemas.set(definition, schema);
  }
  return schema;
}
