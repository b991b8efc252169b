import { finiteNumber, isRecord, nonEmptyString, type JsonSchema, type JsonSchemaDefinition } from './json-schema.js';

export type Primitive = string | number | boolean;

export interface TextRules {
  format?: string;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
}

export interface NumberRules {
  integer: boolean;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  multipleOf?: number;
}

export type ScalarItemShape = ({ kind: 'string' } & TextRules) | ({ kind: 'number' } & NumberRules);

export interface PropertyShape {
  name: string;
  required: boolean;
  schema: JsonSchemaDefinition;
}

export interface ShapeAnnotations {
  /** `null` is accepted besides the shape's own values. */
  nullable: boolean;
  title?: string;
  description?: string;
  /** Wrapped so that a schema without `default` differs from `default: null`. */
  defaultValue?: { value: unknown };
}

export type ShapeBody =
  | ({ kind: 'string' } & TextRules)
  | ({ kind: 'number' } & NumberRules)
  | { kind: 'boolean' }
  | { kind: 'enum'; values: readonly Primitive[] }
  | { kind: 'enum-array'; values: readonly Primitive[]; minItems?: number; maxItems?: number }
  | { kind: 'scalar-array'; item: ScalarItemShape; minItems?: number; maxItems?: number }
  | { kind: 'object'; properties: readonly PropertyShape[]; extraProperties: 'allowed' | 'forbidden' }
  /** Anything a form field cannot hold: edited as JSON text. */
  | { kind: 'json' };

export type SchemaShape = ShapeAnnotations & ShapeBody;

/** `$ref` chains longer than this are treated as unresolvable rather than followed forever. */
const MAX_REFERENCE_HOPS = 16;
const ANNOTATIONS = ['title', 'description', 'default'] as const;

/**
 * Reads schemas against one root document, so local `$ref`s (`#`, `#/definitions/…`, `#/$defs/…`)
 * resolve. Remote references cannot be fetched by a pure function; they become JSON fields.
 */
export function createSchemaReader(root: JsonSchemaDefinition): (definition: JsonSchemaDefinition) => SchemaShape {
  const describe = (definition: JsonSchemaDefinition): SchemaShape => {
    const resolved = resolveReferences(root, definition);
    if (resolved === undefined) return { kind: 'json', nullable: false };
    const { schema, nullable } = unwrapNullable(resolved);
    const common = annotations(schema, nullable || (schema !== undefined && listsNull(schema)));
    return { ...common, ...describeNonNull(schema, describe) };
  };
  return describe;
}

function describeNonNull(schema: JsonSchema | undefined, describe: (definition: JsonSchemaDefinition) => SchemaShape): ShapeBody {
  if (schema === undefined) return { kind: 'json' };
  const values = enumValues(schema);
  if (values === 'unsupported') return { kind: 'json' };
  if (values !== undefined) return values.length === 0 ? { kind: 'json' } : { kind: 'enum', values };
  switch (singleType(schema)) {
    case 'string':
      return { kind: 'string', ...textRules(schema) };
    case 'number':
      return { kind: 'number', ...numberRules(schema, false) };
    case 'integer':
      return { kind: 'number', ...numberRules(schema, true) };
    case 'boolean':
      return { kind: 'boolean' };
    case 'array':
      return describeArray(schema, describe);
    case 'object':
      return describeObject(schema);
    default:
      return { kind: 'json' };
  }
}

function describeArray(schema: JsonSchema, describe: (definition: JsonSchemaDefinition) => SchemaShape): ShapeBody {
  const counts = { minItems: count(schema.minItems), maxItems: count(schema.maxItems) };
  // Tuples and untyped arrays have no one-widget-per-item form.
  if (schema.items === undefined || Array.isArray(schema.items) || 'prefixItems' in schema) return { kind: 'json' };
  const item = describe(schema.items as JsonSchemaDefinition);
  if (item.nullable) return { kind: 'json' };
  if (item.kind === 'enum') return { kind: 'enum-array', values: item.values, ...counts };
  if (item.kind === 'string') {
    return { kind: 'scalar-array', item: { kind: 'string', format: item.format, minLength: item.minLength, maxLength: item.maxLength, pattern: item.pattern }, ...counts };
  }
  if (item.kind === 'number') {
    const { kind, integer, minimum, maximum, exclusiveMinimum, exclusiveMaximum, multipleOf } = item;
    return { kind: 'scalar-array', item: { kind, integer, minimum, maximum, exclusiveMinimum, exclusiveMaximum, multipleOf }, ...counts };
  }
  return { kind: 'json' };
}

function describeObject(schema: JsonSchema): ShapeBody {
  const properties = isRecord(schema.properties) ? Object.entries(schema.properties) : [];
  // A map-like object (`additionalProperties: {schema}`) has keys nobody knows in advance.
  const additional = schema.additionalProperties;
  if (properties.length === 0 || (additional !== undefined && typeof additional !== 'boolean') || 'patternProperties' in schema) {
    return { kind: 'json' };
  }
  const required = new Set(Array.isArray(schema.required) ? schema.required.filter((name) => typeof name === 'string') : []);
  return {
    kind: 'object',
    properties: properties.map(([name, definition]) => ({ name, required: required.has(name), schema: definition as JsonSchemaDefinition })),
    extraProperties: additional === false ? 'forbidden' : 'allowed',
  };
}

function annotations(schema: JsonSchema | undefined, nullable: boolean): ShapeAnnotations {
  return {
    nullable,
    title: nonEmptyString(schema?.title),
    description: nonEmptyString(schema?.description),
    defaultValue: schema !== undefined && 'default' in schema && schema.default !== undefined ? { value: schema.default } : undefined,
  };
}

/**
 * Follows `$ref`s, keeping annotations written next to them (zod puts `description` there).
 * Undefined when a reference cannot be resolved.
 */
function resolveReferences(root: JsonSchemaDefinition, definition: JsonSchemaDefinition): JsonSchemaDefinition | undefined {
  let current: JsonSchemaDefinition = definition;
  for (let hop = 0; hop < MAX_REFERENCE_HOPS; hop++) {
    if (!isRecord(current) || typeof current.$ref !== 'string') return current;
    const target = resolvePointer(root, current.$ref);
    if (target === undefined) return undefined;
    const { $ref: _reference, ...siblings } = current;
    current = isRecord(target) ? { ...(target as JsonSchema), ...pickAnnotations(siblings) } : target;
  }
  return undefined;
}

function resolvePointer(root: JsonSchemaDefinition, reference: string): JsonSchemaDefinition | undefined {
  if (reference === '#') return root;
  if (!reference.startsWith('#/')) return undefined;
  let node: unknown = root;
  for (const rawSegment of reference.slice(2).split('/')) {
    let segment: string;
    try {
      segment = decodeURIComponent(rawSegment).replaceAll('~1', '/').replaceAll('~0', '~');
    } catch {
      return undefined;
    }
    if (!isRecord(node) || !Object.hasOwn(node, segment)) return undefined;
    node = node[segment];
  }
  return isRecord(node) || typeof node === 'boolean' ? (node as JsonSchemaDefinition) : undefined;
}

/**
 * Separates "may also be null" from the rest: `nullable: true`, `type: [T, 'null']` and
 * `anyOf`/`oneOf` of schemas plus `{type: 'null'}` (zod's `.nullable()`, pydantic's `T | None`).
 * Returns an undefined schema when nothing but null is left, when more than one schema is (a
 * JSON field), or for `true`/`false` schemas; `nullable` is right either way, so an explicit
 * `null` the model sent is kept rather than read as "left out".
 */
function unwrapNullable(definition: JsonSchemaDefinition): { schema: JsonSchema | undefined; nullable: boolean } {
  if (!isRecord(definition)) return { schema: undefined, nullable: false };
  let schema: JsonSchema = definition;
  let nullable = schema.nullable === true;
  if (Array.isArray(schema.type) && schema.type.includes('null')) {
    nullable = true;
    const rest = schema.type.filter((type) => type !== 'null');
    if (rest.length === 0) return { schema: undefined, nullable };
    schema = { ...schema, type: rest.length === 1 ? rest[0] : rest };
  }
  for (const keyword of ['anyOf', 'oneOf', 'allOf'] as const) {
    const branches = schema[keyword];
    if (!Array.isArray(branches)) continue;
    const nonNull = keyword === 'allOf' ? branches : branches.filter((branch) => !isNullSchema(branch));
    if (nonNull.length < branches.length) nullable = true;
    if (nonNull.length !== 1 || !isRecord(nonNull[0])) return { schema: undefined, nullable };
    const { [keyword]: _branches, ...outer } = schema;
    const inner = unwrapNullable(nonNull[0] as JsonSchema);
    if (inner.schema === undefined) return { schema: undefined, nullable: nullable || inner.nullable };
    return { schema: { ...inner.schema, ...pickAnnotations(outer) }, nullable: nullable || inner.nullable };
  }
  return { schema, nullable };
}

function isNullSchema(definition: unknown): boolean {
  if (!isRecord(definition)) return false;
  if (definition.type === 'null') return true;
  if (definition.const === null) return true;
  return Array.isArray(definition.enum) && definition.enum.length > 0 && definition.enum.every((value) => value === null);
}

function pickAnnotations(schema: Record<string, unknown>): Partial<JsonSchema> {
  const picked: Record<string, unknown> = {};
  for (const key of ANNOTATIONS) if (schema[key] !== undefined) picked[key] = schema[key];
  return picked;
}

/**
 * `enum: [..., null]` or `const: null` with no `type` to rule null out: null is one of the values.
 * (`type: 'string', enum: ['a', null]` accepts no null; a `type` that allows it is unwrapped already.)
 */
function listsNull(schema: JsonSchema): boolean {
  if (schema.type !== undefined) return false;
  if ('const' in schema && schema.const !== undefined) return schema.const === null;
  return Array.isArray(schema.enum) && schema.enum.includes(null);
}

/** `enum`/`const` values; `'unsupported'` when some are objects or arrays. Null is left out: see `listsNull`. */
function enumValues(schema: JsonSchema): readonly Primitive[] | 'unsupported' | undefined {
  const raw = 'const' in schema && schema.const !== undefined ? [schema.const] : Array.isArray(schema.enum) ? schema.enum : undefined;
  if (raw === undefined) return undefined;
  const values: Primitive[] = [];
  const seen = new Set<string>();
  for (const value of raw) {
    if (value === null) continue;
    if (typeof value !== 'string' && typeof value !== 'boolean' && !(typeof value === 'number' && Number.isFinite(value))) return 'unsupported';
    const key = JSON.stringify(value);
    if (!seen.has(key)) values.push(value);
    seen.add(key);
  }
  return values;
}

function singleType(schema: JsonSchema): string | undefined {
  if (typeof schema.type === 'string') return schema.type;
  if (Array.isArray(schema.type)) return schema.type.length === 1 ? schema.type[0] : undefined;
  if (isRecord(schema.properties)) return 'object';
  if (schema.items !== undefined) return 'array';
  return undefined;
}

function textRules(schema: JsonSchema): TextRules {
  return {
    format: nonEmptyString(schema.format),
    minLength: count(schema.minLength),
    maxLength: count(schema.maxLength),
    pattern: typeof schema.pattern === 'string' ? schema.pattern : undefined,
  };
}

function numberRules(schema: JsonSchema, integer: boolean): NumberRules {
  let minimum = finiteNumber(schema.minimum);
  let maximum = finiteNumber(schema.maximum);
  let exclusiveMinimum = finiteNumber(schema.exclusiveMinimum);
  let exclusiveMaximum = finiteNumber(schema.exclusiveMaximum);
  // Draft-04 spelling: a boolean that makes `minimum`/`maximum` exclusive.
  if (schema.exclusiveMinimum === true && minimum !== undefined) [exclusiveMinimum, minimum] = [minimum, undefined];
  if (schema.exclusiveMaximum === true && maximum !== undefined) [exclusiveMaximum, maximum] = [maximum, undefined];
  const multipleOf = finiteNumber(schema.multipleOf);
  return { integer, minimum, maximum, exclusiveMinimum, exclusiveMaximum, multipleOf: multipleOf !== undefined && multipleOf > 0 ? multipleOf : undefined };
}

function count(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 ? value : undefined;
}
