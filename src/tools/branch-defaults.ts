import type { JSONSchema7 } from 'ai';
import { canonicalJson } from '../approvals/input-version.js';
import type { JsonSchemaValidator } from './json-schema-validator.js';

/** A schema or a subschema: `true` and `false` are schemas too. */
type SchemaNode = JSONSchema7 | boolean;

/**
 * The `default`s inside `anyOf` and `oneOf` branches, which ajv's `useDefaults` skips: pydantic
 * (FastMCP) writes a union of models (`target: Deployment | StatefulSet`) and an optional model
 * (`target: Deployment | None = None`) that way, with `namespace: str = "prod"` inside the branch.
 * The server builds the branch's model, defaults included, so the policy must see them as well.
 *
 * For each union the value is checked against every branch (as ajv checks the union itself):
 * - no branch matches: nothing is filled (the value will not run as written anyway);
 * - one branch matches: its defaults are filled in (ajv fills what it reaches: `properties`,
 *   `$ref`, `allOf`, nested objects; this walk then fills the unions inside that branch);
 * - several match: where their filled values agree the value is kept; where they disagree the
 *   field holds the list of the candidates (and `null` for a branch that leaves it out), which an
 *   input condition reads as unclear (`input-condition.ts`), so the stricter rule decides.
 * A branch whose schema cannot be compiled on its own (a `$ref` into the root other than through
 * `$defs` or `definitions`) counts as matching with no defaults of its own: it may be the one.
 *
 * `validator` must fill defaults (`applyDefaults: true`); the value passed in is never changed.
 */
export function fillBranchDefaults({
  schema,
  value,
  validator,
}: {
  /** The whole schema, the one `$ref`s are resolved against. */
  schema: JSONSchema7;
  /** The input, with the defaults outside unions filled in already. */
  value: unknown;
  validator: Pick<JsonSchemaValidator, 'validate' | 'isUsable'>;
}): unknown {
  const root = schema;

  function walk(node: SchemaNode | undefined, current: unknown, seen: ReadonlySet<object>): unknown {
    // A `$ref` cycle that reads no deeper into the value (`A: {anyOf: [{$ref: A}, …]}`) stops here.
    if (typeof node !== 'object' || node === null || seen.has(node)) return current;
    const here = new Set(seen).add(node);
    let result = current;
    if (typeof node.$ref === 'string') result = walk(resolveRef(root, node.$ref), result, here);
    for (const part of node.allOf ?? []) result = walk(part, result, here);
    for (const union of [node.anyOf, node.oneOf]) if (union !== undefined) result = fillUnion(union, result, here);
    return walkChildren(node, result);
  }

  function fillUnion(branches: readonly SchemaNode[], current: unknown, seen: ReadonlySet<object>): unknown {
    const candidates: unknown[] = [];
    for (const branch of branches) {
      const alone = branchSchema(root, branch);
      if (!validator.isUsable(alone)) {
        candidates.push(current);
        continue;
      }
      const checked = validator.validate(alone, current);
      if (checked.success) candidates.push(walk(branch, checked.value, seen));
    }
    return candidates.length === 0 ? current : mergeCandidates(candidates);
  }

  // As ajv reads a draft-07 schema: `properties`, then `additionalProperties` for the other keys
  // (unless `patternProperties` may claim them); `items` for every element, or by position with
  // `additionalItems` after.
  function walkChildren(node: JSONSchema7, current: unknown): unknown {
    if (Array.isArray(current)) {
      const { items, additionalItems } = node;
      if (items === undefined) return current;
      return current.map((element, index) => walk(Array.isArray(items) ? (index < items.length ? items[index] : additionalItems) : items, element, new Set()));
    }
    if (typeof current !== 'object' || current === null) return current;
    const { properties, additionalProperties, patternProperties } = node;
    if (properties === undefined && (typeof additionalProperties !== 'object' || patternProperties !== undefined)) return current;
    return Object.fromEntries(
      Object.entries(current).map(([key, inner]) => {
        const child = properties !== undefined && Object.hasOwn(properties, key) ? properties[key] : patternProperties === undefined ? additionalProperties : undefined;
        return [key, walk(child, inner, new Set())];
      }),
    );
  }

  return walk(root, value, new Set());
}

/** One branch as a schema of its own, still reaching the root's `$defs` (pydantic's models) and `definitions`. */
function branchSchema(root: JSONSchema7, branch: SchemaNode): JSONSchema7 {
  return {
    ...(root.$id === undefined ? {} : { $id: root.$id }),
    ...(root.$defs === undefined ? {} : { $defs: root.$defs }),
    ...(root.definitions === undefined ? {} : { definitions: root.definitions }),
    allOf: [branch],
  };
}

/** A `$ref` into this schema (`#`, `#/$defs/Deployment`); any other is not followed. */
function resolveRef(root: JSONSchema7, ref: string): SchemaNode | undefined {
  if (!ref.startsWith('#')) return undefined;
  let pointer: string;
  try {
    pointer = decodeURIComponent(ref.slice(1));
  } catch {
    return undefined;
  }
  if (pointer === '') return root;
  if (!pointer.startsWith('/')) return undefined;
  let node: unknown = root;
  for (const segment of pointer.slice(1).split('/')) {
    const key = segment.replaceAll('~1', '/').replaceAll('~0', '~');
    if (typeof node !== 'object' || node === null || !Object.hasOwn(node, key)) return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return typeof node === 'object' || typeof node === 'boolean' ? (node as SchemaNode) : undefined;
}

/**
 * One value for what every matching branch makes of the input: kept where they agree, merged key by
 * key through objects and element by element through lists of one length, and where they differ the
 * list of the distinct candidates (`null` standing for a branch that leaves the field out).
 */
function mergeCandidates(candidates: readonly unknown[]): unknown {
  const distinct = distinctValues(candidates);
  if (distinct.length === 1) return distinct[0];
  if (distinct.every(isPlainObject)) {
    const keys = [...new Set(distinct.flatMap((candidate) => Object.keys(candidate)))];
    return Object.fromEntries(
      keys.map((key) => {
        const present = distinct.filter((candidate) => Object.hasOwn(candidate, key)).map((candidate) => candidate[key]);
        return [key, present.length === distinct.length ? mergeCandidates(present) : candidateList([...present, null])];
      }),
    );
  }
  const [first] = distinct;
  if (Array.isArray(first) && distinct.every((candidate) => Array.isArray(candidate) && candidate.length === first.length)) {
    return first.map((_element, index) => mergeCandidates(distinct.map((candidate) => (candidate as unknown[])[index])));
  }
  return distinct;
}

function candidateList(values: readonly unknown[]): unknown {
  const distinct = distinctValues(values);
  return distinct.length === 1 ? distinct[0] : distinct;
}

function distinctValues(values: readonly unknown[]): unknown[] {
  const byContent = new Map<string, unknown>();
  for (const value of values) {
    const key = canonicalJson(value);
    if (!byContent.has(key)) byContent.set(key, value);
  }
  return [...byContent.values()];
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
