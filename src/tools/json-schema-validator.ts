import { Ajv, type ErrorObject } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { JSONSchema7 } from 'ai';

// ajv-formats is CommonJS; under NodeNext its default export arrives wrapped in `default`.
type AddFormats = (ajv: Ajv) => Ajv;
const addFormats: AddFormats =
  (addFormatsModule as unknown as { default?: AddFormats }).default ?? (addFormatsModule as unknown as AddFormats);

export interface JsonSchemaIssue {
  /** Property path, e.g. ['resources', 'cpu']; empty for the value as a whole. */
  path: Array<string | number>;
  message: string;
}

export type JsonSchemaValidation = { success: true; value: unknown } | { success: false; issues: JsonSchemaIssue[] };

/**
 * Validates values against JSON Schemas that are not zod (MCP tools, `ask_user` answer schemas):
 * the AI SDK does not validate those, so a human's input would otherwise reach the tool unchecked.
 * Schemas come from the model or a server, so a schema that does not compile is reported, not thrown.
 */
export function createJsonSchemaValidator() {
  const ajv = new Ajv({ allErrors: true, strict: false, coerceTypes: false, useDefaults: false });
  addFormats(ajv);
  const compiled = new WeakMap<object, ReturnType<typeof ajv.compile>>();

  function compile(schema: JSONSchema7): ReturnType<typeof ajv.compile> {
    let validate = compiled.get(schema);
    if (!validate) {
      const { $schema: _ignored, ...withoutDialect } = schema;
      validate = ajv.compile(withoutDialect);
      compiled.set(schema, validate);
    }
    return validate;
  }

  return {
    /** False when the schema itself is broken (e.g. a model-written `answerSchema`). */
    isUsable(schema: JSONSchema7): boolean {
      try {
        compile(schema);
        return true;
      } catch {
        return false;
      }
    },
    validate(schema: JSONSchema7, value: unknown): JsonSchemaValidation {
      let validate;
      try {
        validate = compile(schema);
      } catch (error) {
        return { success: false, issues: [{ path: [], message: `the schema is not valid: ${(error as Error).message}` }] };
      }
      if (validate(value)) return { success: true, value };
      return { success: false, issues: (validate.errors ?? []).map(toIssue) };
    },
  };
}

export type JsonSchemaValidator = ReturnType<typeof createJsonSchemaValidator>;

function toIssue(error: ErrorObject): JsonSchemaIssue {
  const path = error.instancePath
    .split('/')
    .slice(1)
    .map((segment) => segment.replaceAll('~1', '/').replaceAll('~0', '~'));
  // A missing required property is reported on its parent; point at the property itself.
  if (error.keyword === 'required' && typeof error.params.missingProperty === 'string') {
    return { path: [...path, error.params.missingProperty], message: 'is required' };
  }
  return { path, message: error.message ?? 'is not valid' };
}
