import { Ajv, type ErrorObject, type Options, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { fullFormats } from 'ajv-formats/dist/formats.js';
import type { JSONSchema7 } from 'ai';
import { canonicalJson } from '../approvals/input-version.js';
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
 * Compiled schemas kept per validator. A model writes a new `answerSchema` for each question, so
 * the cache forgets the least recently used; and since ajv keeps everything it compiled for as
 * long as it lives, it is replaced after as many compiles: what stays alive is at most the cache's
 * validators and the two ajv instances they were compiled in.
 */
const MAX_COMPILED_SCHEMAS = 200;

type Compiled = { validate: ValidateFunction } | { error: Error };

/**
 * Validates values against JSON Schemas that are not zod (MCP tools, `ask_user` answer schemas):
 * the AI SDK does not validate those, so a human's input would otherwise reach the tool unchecked.
 * Schemas come from the model or a server, so a schema that does not compile is reported, not thrown.
 */
export function createJsonSchemaValidator({ applyDefaults = false, maxCompiled = MAX_COMPILED_SCHEMAS }: JsonSchemaValidatorOptions & { maxCompiled?: number } = {}) {
  let ajv = newAjv({ applyDefaults });
  let compilesLeft = maxCompiled;
  // By content, not by object: each read of a step is a new object holding the same schema, and
  // two tools (or two questions) may hold equal schemas. Map order is the order of last use.
  const compiled = new Map<string, Compiled>();

  function compile(schema: JSONSchema7): ValidateFunction {
    const { $schema: _ignored, ...withoutDialect } = schema;
    const key = canonicalJson(withoutDialect);
    let entry = compiled.get(key);
    if (entry) {
      compiled.delete(key);
    } else {
      if (compilesLeft === 0) {
        ajv = newAjv({ applyDefaults });
        compilesLeft = maxCompiled;
      }
      compilesLeft -= 1;
      entry = compileOnce(ajv, withoutDialect);
      if (compiled.size >= maxCompiled) compiled.delete(compiled.keys().next().value as string);
    }
    compiled.set(key, entry);
    if ('error' in entry) throw entry.error;
    return entry.validate;
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
      return { success: false, issues: (validate.errors ?? []).map((error) => toIssue(error, checked)) };
    },
  };
}

export type JsonSchemaValidator = ReturnType<typeof createJsonSchemaValidator>;

const RFC3339_TIME = fullFormats.time as { validate: (value: string) => boolean };

/**
 * The check this validator runs for `format: "time"` (ajv-formats' `time`, which `addFormats`
 * registers): RFC 3339's full-time, with seconds and a time zone (`07:45:00Z`, `07:45:00+02:00`).
 * A form that collects a time for this validator checks it with the same function.
 */
export function isJsonSchemaTime(value: string): boolean {
  return RFC3339_TIME.validate(value);
}

/**
 * `addUsedSchema: false`: a schema's `$id` is not registered in the instance. Registered, a second
 * schema with the same `$id` (the same question read again, two MCP tools sharing an `$id`, a tool
 * whose schema changed) would not compile ("schema with key or id already exists") and would be
 * taken for a broken one; a schema still resolves its own `$id` in its `$ref`s.
 */
function newAjv({ applyDefaults }: { applyDefaults: boolean }): Ajv {
  const ajv = new Ajv({ allErrors: true, strict: false, coerceTypes: false, useDefaults: applyDefaults, addUsedSchema: false, code: { regExp: linearRegExp } });
  addFormats(ajv);
  return ajv;
}

function compileOnce(ajv: Ajv, schema: object): Compiled {
  try {
    return { validate: ajv.compile(schema) };
  } catch (error) {
    return { error: error instanceof Error ? error : new Error(String(error)) };
  }
}

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

function toIssue(error: ErrorObject, value: unknown): JsonSchemaIssue {
  const segments = error.instancePath
    .split('/')
    .slice(1)
    .map((segment) => segment.replaceAll('~1', '/').replaceAll('~0', '~'));
  const path = withIndexes(segments, value);
  // A missing required property is reported on its parent; point at the property itself.
  if (error.keyword === 'required' && typeof error.params.missingProperty === 'string') {
    return { path: [...path, error.params.missingProperty], message: 'is required' };
  }
  return { path, message: error.message ?? 'is not valid' };
}

/**
 * Array indexes as numbers, as zod reports them: a JSON Pointer cannot tell `hosts/2` (the third
 * host) from a property named "2", and a form counts list items from one.
 */
function withIndexes(segments: readonly string[], value: unknown): Array<string | number> {
  let container = value;
  return segments.map((segment) => {
    const index = Array.isArray(container) && /^(0|[1-9]\d*)$/.test(segment) ? Number(segment) : undefined;
    container = typeof container === 'object' && container !== null && Object.hasOwn(container, segment) ? (container as Record<string, unknown>)[segment] : undefined;
    return index ?? segment;
  });
}
