import { Ajv, type ErrorObject, type Options } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { JSONSchema7 } from 'ai';
import { compileSchemaPattern, type SchemaPattern } from './schema-pattern.js';

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

export interface JsonSchemaValidatorOptions {
  /**
   * Fill in the schema's `default`s (ajv's own `useDefaults`, nested objects included) on a copy
   * of the value, which a success returns; the value passed in is never changed. Off, a success
   * returns the value itself: what is sent to a tool stays what the model or the approver wrote.
   */
  applyDefaults?: boolean;
}

/**
 * Validates values against JSON Schemas that are not zod (MCP tools, `ask_user` answer schemas):
 * the AI SDK does not validate those, so a human's input would otherwise reach the tool unchecked.
 * Schemas come from the model or a server, so a schema that does not compile is reported, not thrown.
 */
export function createJsonSchemaValidator({ applyDefaults = false }: JsonSchemaValidatorOptions = {}) {
  const ajv = new Ajv({ allErrors: true, strict: false, coerceTypes: false, useDefaults: applyDefaults, code: { regExp: linearRegExp } });
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
      // ajv fills defaults in place, so it works on a copy (inputs are JSON: structuredClone keeps them whole).
      const checked = applyDefaults ? structuredClone(value) : value;
      if (validate(checked)) return { success: true, value: checked };
      return { success: false, issues: (validate.errors ?? []).map(toIssue) };
    },
  };
}

export type JsonSchemaValidator = ReturnType<typeof createJsonSchemaValidator>;

/**
 * `pattern` and `patternProperties` in linear time: ajv's default `new RegExp` backtracks, and the
 * schema (an MCP server's, the model's) and the value (the model's input) both come from outside.
 * A pattern the linear engine cannot run (lookahead, backreferences) is not checked rather than
 * making the tool unusable: the server still checks its own input, and the approver sees the value.
 * A pattern that is not valid at all still makes the schema not valid, as before.
 */
const linearRegExp: NonNullable<NonNullable<Options['code']>['regExp']> = Object.assign(
  (source: string): SchemaPattern => {
    const compiled = compileSchemaPattern(source);
    if (compiled.kind === 'invalid') throw new Error(`pattern ${JSON.stringify(source)} is not valid: ${compiled.reason}`);
    return compiled.kind === 'linear' ? compiled.pattern : { test: () => true, toString: () => source };
  },
  // Only standalone code (which this bot does not generate) would print this.
  { code: 'compileSchemaPattern' },
);

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
