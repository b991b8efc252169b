import { asSchema, type FlexibleSchema, type Schema } from 'ai';

const schemas = new WeakMap<object, Schema<unknown>>();

/**
 * The AI SDK turns a zod schema into JSON Schema lazily but on a fresh wrapper each time it is
 * given the zod object, so every model call converted every tool's schema again (about half a
 * millisecond per call in the benchmark's profile). One wrapper per schema keeps the conversion
 * it did the first time; validation is the schema's own, unchanged.
 */
export function cachedSchema<INPUT>(schema: FlexibleSchema<INPUT>): Schema<INPUT> {
  if (typeof schema !== 'object' || schema === null) return asSchema(schema);
  let cached = schemas.get(schema);
  if (!cached) {
    cached = asSchema(schema) as Schema<unknown>;
    schemas.set(schema, cached);
  }
  return cached as Schema<INPUT>;
}
