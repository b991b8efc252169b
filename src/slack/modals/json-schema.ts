/**
 * The parts of a JSON Schema (draft-07, as `asSchema(tool.inputSchema).jsonSchema` produces, plus
 * the OpenAPI `nullable` keyword) that the form reads. Structural, so `JSONSchema7` from `ai` or
 * `json-schema` is assignable. Every keyword is still checked at runtime: MCP servers and the
 * model (for `ask_user`) write schemas too, and those can hold anything.
 */
export interface JsonSchema {
  type?: string | readonly string[];
  title?: string;
  description?: string;
  default?: unknown;
  enum?: readonly unknown[];
  const?: unknown;
  format?: string;
  pattern?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  /** A number in draft-06 and later; a boolean modifier of `minimum` in draft-04. */
  exclusiveMinimum?: number | boolean;
  exclusiveMaximum?: number | boolean;
  multipleOf?: number;
  items?: JsonSchemaDefinition | readonly JsonSchemaDefinition[];
  minItems?: number;
  maxItems?: number;
  properties?: Readonly<Record<string, JsonSchemaDefinition>>;
  required?: readonly string[];
  additionalProperties?: JsonSchemaDefinition;
  anyOf?: readonly JsonSchemaDefinition[];
  oneOf?: readonly JsonSchemaDefinition[];
  allOf?: readonly JsonSchemaDefinition[];
  $ref?: string;
  definitions?: Readonly<Record<string, JsonSchemaDefinition>>;
  $defs?: Readonly<Record<string, JsonSchemaDefinition>>;
  nullable?: boolean;
}

export type JsonSchemaDefinition = JsonSchema | boolean;

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function finiteNumber(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

export function nonEmptyString(value: unknown): string | undefined {
  return typeof value === 'string' && value.trim() !== '' ? value : undefined;
}
