import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { boundedShrinking } from '../../../test/helpers/bounded-shrinking.js';
import { findBlockKitViolations, SLACK_LIMITS } from '../blocks/limits.js';
import type { JsonSchema } from './json-schema.js';
import { modalView } from './modal-view.js';
import { decodeActionId, presencesAlong, valueAt } from './field-presence.js';
import { buildSchemaForm, parseSchemaForm, type FormField, type SchemaForm } from './schema-form.js';
import { shownDefault } from './shown-default.js';
import { stateFromBlocks, stateFromInput, type StateValues } from './view-state.test-support.js';
import type { JSONSchema7 } from 'ai';
import { fillBranchDefaults } from '../../tools/branch-defaults.js';
import { createJsonSchemaValidator } from '../../tools/json-schema-validator.js';

/** More runs for a soak: `PROPERTY_RUNS=4000 npx vitest run src/slack/modals`. */
const PROPERTY_RUNS = Number(process.env.PROPERTY_RUNS ?? 150);
/** Generating the wide schemas dominates: about 40 ms a run. */
const PROPERTY_TIMEOUT = Math.max(120_000, PROPERTY_RUNS * 200);

/** A schema and values valid for it, generated independently of the code under test. */
interface Case {
  schema: JsonSchema;
  value: fc.Arbitrary<unknown>;
}

const PROPERTY_NAMES = fc.oneof(
  { weight: 6, arbitrary: fc.stringMatching(/^[a-z][a-z_]{0,14}$/) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 20 }) },
  { weight: 1, arbitrary: fc.constantFrom('__proto__', 'constructor', '', ' ', 'a.b', 'x'.repeat(300)) },
);
const ANNOTATION = fc.option(fc.oneof(fc.string({ maxLength: 40 }), fc.string({ unit: 'binary', minLength: 2000, maxLength: 5000 })), { nil: undefined });
/** Long strings built by repetition: generating thousands of characters one by one is slow. */
function repeatedTo(unit: fc.Arbitrary<string>, { minLength, maxLength }: { minLength: number; maxLength: number }): fc.Arbitrary<string> {
  return fc.tuple(unit.filter((text) => text.length > 0), fc.integer({ min: minLength, max: maxLength })).map(([text, length]) => {
    const whole = [...text.repeat(Math.ceil(length / text.length))];
    return whole.slice(0, length).join('');
  });
}
const LONG_TEXT = repeatedTo(fc.oneof(fc.string({ maxLength: 30 }), fc.string({ unit: 'binary', maxLength: 30 })), { minLength: 3001, maxLength: 4000 });
const DATE = fc.date({ min: new Date('0001-01-01T00:00:00Z'), max: new Date('9999-12-31T23:59:59Z'), noInvalidDate: true });

/** Mostly a few short options; sometimes odd or long ones, sometimes more than a menu holds. */
const ENUM_VALUES: fc.Arbitrary<string[]> = fc.oneof(
  { weight: 4, arbitrary: fc.uniqueArray(fc.string({ maxLength: 20 }), { minLength: 1, maxLength: 8 }) },
  { weight: 1, arbitrary: fc.uniqueArray(fc.string({ unit: 'binary', maxLength: 90 }), { minLength: 1, maxLength: 8 }) },
  {
    weight: 1,
    arbitrary: fc.tuple(fc.integer({ min: 4, max: 150 }), fc.string({ maxLength: 75 })).map(([count, stem]) => Array.from({ length: count }, (_, index) => `${stem}${index}`)),
  },
);

function stringCase(): fc.Arbitrary<Case> {
  const plain = fc.record({ minLength: fc.option(fc.nat(5), { nil: undefined }), maxLength: fc.option(fc.integer({ min: 5, max: 400 }), { nil: undefined }) }).map(
    ({ minLength, maxLength }): Case => ({
      schema: { type: 'string', ...(minLength !== undefined ? { minLength } : {}), ...(maxLength !== undefined ? { maxLength } : {}) },
      value: fc.oneof(
        { weight: 5, arbitrary: fc.string({ minLength: minLength ?? 0, maxLength: maxLength ?? 60 }) },
        {
          weight: 2,
          // Graphemes can be several code points; JSON Schema lengths count code points.
          arbitrary: fc.string({ unit: 'grapheme', minLength: minLength ?? 0, maxLength: maxLength ?? 60 }).filter((text) => [...text].length <= (maxLength ?? Infinity)),
        },
        { weight: 1, arbitrary: fc.string({ unit: 'binary', minLength: minLength ?? 0, maxLength: maxLength ?? 60 }) },
        { weight: 1, arbitrary: maxLength === undefined ? LONG_TEXT : fc.string({ minLength: minLength ?? 0, maxLength }) },
      ),
    }),
  );
  const formats: fc.Arbitrary<Case>[] = [
    fc.constant({ schema: { type: 'string', format: 'email' }, value: fc.oneof(fc.emailAddress(), fc.constant('oncall@example.com')) }),
    fc.constant({ schema: { type: 'string', format: 'uri' }, value: fc.webUrl() }),
    fc.constant({ schema: { type: 'string', format: 'date' }, value: DATE.map((date) => date.toISOString().slice(0, 10)) }),
    fc.constant({
      schema: { type: 'string', format: 'date-time' },
      value: fc.oneof(
        DATE.map((date) => date.toISOString().replace(/\.\d{3}Z$/, 'Z')),
        DATE.map((date) => date.toISOString()),
        DATE.map((date) => date.toISOString().replace('Z', '+02:00')),
      ),
    }),
    fc.constant({
      schema: { type: 'string', format: 'time' },
      value: fc.tuple(fc.integer({ min: 0, max: 23 }), fc.integer({ min: 0, max: 59 }), fc.option(fc.integer({ min: 0, max: 59 }), { nil: undefined })).map(
        ([hours, minutes, seconds]) => [hours, minutes, ...(seconds === undefined ? [] : [seconds])].map((part) => String(part).padStart(2, '0')).join(':'),
      ),
    }),
    fc.constant({ schema: { type: 'string', format: 'textarea' }, value: fc.string({ maxLength: 200 }) }),
    fc.constant({ schema: { type: 'string', pattern: '^[a-z0-9-]*$' }, value: fc.stringMatching(/^[a-z0-9-]{0,30}$/) }),
  ];
  const enumeration = ENUM_VALUES.map((values): Case => ({ schema: { type: 'string', enum: values }, value: fc.constantFrom(...values) }));
  const mixedEnumeration = fc
    .uniqueArray(fc.oneof(fc.integer({ min: -5, max: 5 }), fc.boolean(), fc.string({ maxLength: 5 })), { minLength: 1, maxLength: 8, selector: (item) => JSON.stringify(item) })
    .map((values): Case => ({ schema: { enum: values }, value: fc.constantFrom(...values) }));
  return fc.oneof(plain, ...formats, enumeration, mixedEnumeration);
}

function numberCase(): fc.Arbitrary<Case> {
  const integer = fc.record({ minimum: fc.option(fc.integer({ min: -100, max: 0 }), { nil: undefined }), maximum: fc.option(fc.integer({ min: 1, max: 100 }), { nil: undefined }) }).map(
    ({ minimum, maximum }): Case => ({
      schema: { type: 'integer', ...(minimum !== undefined ? { minimum } : {}), ...(maximum !== undefined ? { maximum } : {}) },
      value: fc.integer({ min: minimum ?? Number.MIN_SAFE_INTEGER, max: maximum ?? Number.MAX_SAFE_INTEGER }).filter((value) => !Object.is(value, -0)),
    }),
  );
  const decimal: fc.Arbitrary<Case> = fc.constant({
    schema: { type: 'number' },
    value: fc.double({ noNaN: true, noDefaultInfinity: true }).filter((value) => !Object.is(value, -0)),
  });
  const multiple: fc.Arbitrary<Case> = fc.constant({ schema: { type: 'integer', multipleOf: 5, exclusiveMinimum: 0 }, value: fc.integer({ min: 1, max: 1000 }).map((value) => value * 5) });
  return fc.oneof(integer, decimal, multiple);
}

function arrayCase(): fc.Arbitrary<Case> {
  const enumArray = fc
    .record({ values: ENUM_VALUES, maxItems: fc.option(fc.integer({ min: 1, max: 5 }), { nil: undefined }) })
    .map(({ values, maxItems }): Case => ({
      schema: { type: 'array', items: { type: 'string', enum: values }, ...(maxItems !== undefined ? { maxItems } : {}) },
      value: fc.oneof(
        fc.subarray(values, { maxLength: Math.min(maxItems ?? values.length, values.length) }),
        fc.array(fc.constantFrom(...values), { maxLength: maxItems ?? 4 }),
      ),
    }));
  const strings: fc.Arbitrary<Case> = fc.constant({
    schema: { type: 'array', items: { type: 'string' } },
    // Words fit a one-per-line list; other strings make it JSON.
    value: fc.oneof(fc.array(fc.string({ unit: 'binary', maxLength: 30 }), { maxLength: 6 }), fc.array(fc.stringMatching(/^[a-z0-9]+( [a-z0-9-]+)?$/), { maxLength: 6 })),
  });
  const numbers: fc.Arbitrary<Case> = fc.constant({
    schema: { type: 'array', items: { type: 'number' } },
    value: fc.array(fc.double({ noNaN: true, noDefaultInfinity: true }).filter((value) => !Object.is(value, -0)), { maxLength: 6 }),
  });
  const objects: fc.Arbitrary<Case> = fc.constant({ schema: { type: 'array', items: { type: 'object', properties: { name: { type: 'string' } } } }, value: fc.array(fc.record({ name: fc.string() }), { maxLength: 3 }) });
  return fc.oneof(enumArray, strings, numbers, objects);
}

function objectCase(depth: number, { minWidth = 0, maxWidth = 8, property = caseOf(depth + 1) } = {}): fc.Arbitrary<Case> {
  return fc
    .uniqueArray(fc.tuple(PROPERTY_NAMES, property, fc.boolean()), { minLength: minWidth, maxLength: maxWidth, selector: ([name]) => name })
    .map((entries): Case => ({
      schema: {
        type: 'object',
        properties: Object.fromEntries(entries.map(([name, child]) => [name, child.schema])),
        required: entries.filter(([, , required]) => required).map(([name]) => name),
        additionalProperties: false,
      },
      value: fc.tuple(...entries.map(([name, child, required]) => (required ? child.value.map((value) => ({ value })) : fc.option(child.value.map((value) => ({ value })), { nil: undefined })))).map(
        (values) => {
          const target: Record<string, unknown> = {};
          values.forEach((found, index) => {
            const name = entries[index]![0];
            if (found !== undefined) Object.defineProperty(target, name, { value: found.value, enumerable: true, writable: true, configurable: true });
          });
          return target;
        },
      ),
    }));
}

/** Titles, descriptions, defaults and nullability on top of any case. */
function decorated(base: fc.Arbitrary<Case>): fc.Arbitrary<Case> {
  return fc.tuple(base, ANNOTATION, ANNOTATION, fc.constantFrom('no', 'anyOf', 'type', 'nullable'), fc.boolean()).chain(([inner, title, description, nullable, withDefault]) => {
    const annotated: JsonSchema = { ...inner.schema, ...(title !== undefined ? { title } : {}), ...(description !== undefined ? { description } : {}) };
    const schema: JsonSchema =
      nullable === 'anyOf'
        ? { anyOf: [annotated, { type: 'null' }] }
        : nullable === 'nullable'
          ? { ...annotated, nullable: true }
          : nullable === 'type' && typeof annotated.type === 'string'
            ? { ...annotated, type: [annotated.type, 'null'], ...(annotated.enum ? { enum: [...annotated.enum, null] } : {}) }
            : annotated;
    const value = schema === annotated ? inner.value : fc.oneof(inner.value, fc.constant(null));
    if (!withDefault) return fc.constant({ schema, value });
    // Mostly defaults an approver can clear (`true`, a non-empty list), the ones a form must not bring back.
    return fc.tuple(inner.value, inner.value).map(([first, second]) => ({ schema: { ...schema, default: isEmptyValue(first) ? second : first }, value }));
  });
}

function isEmptyValue(value: unknown): boolean {
  return value === false || value === '' || (Array.isArray(value) && value.length === 0);
}

function caseOf(depth: number): fc.Arbitrary<Case> {
  const leaves = [stringCase(), numberCase(), fc.constant<Case>({ schema: { type: 'boolean' }, value: fc.boolean() }), arrayCase(), LONG_STRING];
  const free: fc.Arbitrary<Case> = fc.constant({ schema: { type: 'object', additionalProperties: { type: 'integer' } }, value: fc.dictionary(fc.string({ maxLength: 8 }), fc.integer()) });
  return decorated(depth >= 4 ? fc.oneof(...leaves) : fc.oneof({ weight: 3, arbitrary: fc.oneof(...leaves) }, { weight: 1, arbitrary: objectCase(depth) }, { weight: 1, arbitrary: free }));
}

/** Too long for any Slack input. */
const LONG_STRING: fc.Arbitrary<Case> = fc.constant({ schema: { type: 'string' }, value: LONG_TEXT });
/** Fits one input, but a hundred of them (3 bytes a character) would not fit one view. */
const BULKY_STRING: fc.Arbitrary<Case> = fc.constant({
  schema: { type: 'string' },
  value: repeatedTo(fc.string({ unit: fc.constantFrom('é', '€', '中', 'a'), maxLength: 10 }), { minLength: 2000, maxLength: 3000 }),
});

/**
 * Mostly object schemas (tool inputs); some with more fields than a modal holds, some whose values
 * together exceed the view size, some not objects at all.
 */
const ROOT_CASES = fc
  .oneof(
    { weight: 6, arbitrary: objectCase(1) },
    { weight: 1, arbitrary: objectCase(1, { minWidth: 90, maxWidth: 220, property: caseOf(3) }) },
    { weight: 1, arbitrary: objectCase(1, { minWidth: 40, maxWidth: 100, property: fc.oneof({ weight: 4, arbitrary: BULKY_STRING }, { weight: 1, arbitrary: LONG_STRING }, { weight: 1, arbitrary: stringCase() }) }) },
    { weight: 1, arbitrary: caseOf(1) },
  )
  .chain((root) => root.value.map((value) => ({ schema: root.schema, value })));

/**
 * The approver types `value` into the form built from it. Inputs of properties it does not have are
 * left as shown: emptying one that shows a default is a change (see `EDITED_CASES`).
 */
function typedAsShown(form: SchemaForm, value: unknown): StateValues {
  const typed = stateFromInput(form, value);
  const shown = stateFromBlocks(form.blocks);
  for (const [blockId, actions] of Object.entries(typed)) {
    if (Object.keys(actions).some((actionId) => decodeActionId(actionId).presences.at(-1) === 'absent')) typed[blockId] = shown[blockId]!;
  }
  return typed;
}

/** Inputs whose empty state is a value of its own: an unticked checkbox is `false`, an empty multi-select or list `[]`. */
function settingFor(field: FormField): fc.Arbitrary<unknown> | undefined {
  const control = field.control;
  switch (control.kind) {
    case 'boolean':
      return field.nullable ? undefined : fc.boolean();
    case 'multi-choice':
      return fc.subarray([...control.options], { minLength: control.minItems ?? 0, maxLength: Math.min(control.maxItems ?? Infinity, control.options.length) });
    case 'list': {
      const item: fc.Arbitrary<unknown> =
        control.item.kind === 'number' ? fc.integer({ min: -1000, max: 1000 }).filter((number) => !Object.is(number, -0)) : control.allowed ? fc.constantFrom(...control.allowed) : fc.stringMatching(/^[a-z0-9]+$/);
      return fc.array(item, { minLength: control.minItems ?? 0, maxLength: control.maxItems ?? 4 });
    }
    default:
      return undefined;
  }
}

/**
 * A form built from a generated value, where the approver ticks and unticks checkboxes, picks and
 * clears multi-selects and rewrites or empties lists (each input as natural widget, whose original
 * value, or default shown, was not `null`), and leaves every other input as shown.
 */
const EDITED_CASES = ROOT_CASES.chain(({ schema, value }) => {
  const form = buildSchemaForm({ schema, initialValue: value });
  const editable = form.blocks.flatMap((block) => {
    if (block.type !== 'input') return [];
    const field = form.fields.find((candidate) => candidate.blockId === block.block_id);
    const setting = field === undefined ? undefined : settingFor(field);
    if (field === undefined || setting === undefined || decodeActionId(String(block.element.action_id)).variant !== 'widget') return [];
    // An empty widget shows `null` too: emptied, it is `null` again.
    if (valueAt(value, field.path)?.value === null) return [];
    if (shownDefault({ fields: form.fields, field, presences: presencesAlong({ initialValue: value, path: field.path }) })?.value === null) return [];
    return [fc.option(setting.map((chosen) => ({ field, chosen })), { nil: undefined })];
  });
  return fc.tuple(...editable).map((settings) => ({ value, form, settings: settings.filter((setting) => setting !== undefined) }));
});

describe('any schema with any valid value', () => {
  it('renders within every Block Kit limit', () => {
    fc.assert(
      fc.property(ROOT_CASES, ({ schema, value }) => {
        const form = buildSchemaForm({ schema, initialValue: value });
        expect(findBlockKitViolations(form.blocks, { surface: 'modal' })).toEqual([]);
        expect(form.blocks.length).toBeLessThanOrEqual(95);
        for (const block of form.blocks) {
          expect(block.block_id!.length).toBeLessThanOrEqual(SLACK_LIMITS.blockIdLength);
          if (block.type === 'input') {
            expect(block.element.action_id!.length).toBeLessThanOrEqual(SLACK_LIMITS.actionIdLength);
            expect(block.label.text.length).toBeLessThanOrEqual(150);
            const element = block.element as { initial_value?: string; max_length?: number };
            if (element.initial_value !== undefined && element.max_length !== undefined) expect(element.initial_value.length).toBeLessThanOrEqual(element.max_length);
          }
        }
        // Throws past 100 blocks or 250 kB.
        modalView({ callbackId: 'edit', title: 'Edit', privateMetadata: 'ap_1', blocks: [{ type: 'context', elements: [{ type: 'mrkdwn', text: 'intro' }] }, ...form.blocks] });
        const fresh = buildSchemaForm({ schema });
        expect(findBlockKitViolations(fresh.blocks, { surface: 'modal' })).toEqual([]);
      }),
      { numRuns: PROPERTY_RUNS, plugins: [boundedShrinking()] },
    );
  }, PROPERTY_TIMEOUT);

  it('parses an untouched submission back to the same value', () => {
    fc.assert(
      fc.property(ROOT_CASES, ({ schema, value }) => {
        const form = buildSchemaForm({ schema, initialValue: value });
        expect(parseSchemaForm({ form, stateValues: stateFromBlocks(form.blocks) })).toEqual({ ok: true, value });
        expect(parseSchemaForm({ form, stateValues: typedAsShown(form, value) })).toEqual({ ok: true, value });
        // The submit handler's way: fields rebuilt from the schema alone.
        expect(parseSchemaForm({ schema, stateValues: stateFromBlocks(form.blocks), initialValue: value })).toEqual({ ok: true, value });
      }),
      { numRuns: PROPERTY_RUNS, plugins: [boundedShrinking()] },
    );
  }, PROPERTY_TIMEOUT);

  it('gives back what the approver set in checkboxes, multi-selects and lists, whatever the defaults', () => {
    fc.assert(
      fc.property(EDITED_CASES, ({ value, form, settings }) => {
        const stateValues = stateFromBlocks(form.blocks);
        for (const { field, chosen } of settings) {
          const input = field.path.reduceRight<unknown>((inner, name) => Object.defineProperty({}, name, { value: inner, enumerable: true }), chosen);
          stateValues[field.blockId] = stateFromInput(form, input)[field.blockId]!;
        }
        const parsed = parseSchemaForm({ form, stateValues });
        if (!parsed.ok) {
          // A change inside an object the model left out brings the object in; its other required fields may be missing.
          expect(Object.keys(parsed.errors).filter((blockId) => settings.some(({ field }) => field.blockId === blockId))).toEqual([]);
          return;
        }
        for (const { field, chosen } of settings) {
          const original = valueAt(value, field.path);
          // A default shows where the model left the property out: its own, or an object's around it.
          const defaulted = shownDefault({ fields: form.fields, field, presences: presencesAlong({ initialValue: value, path: field.path }) });
          const shown = original?.value ?? defaulted?.value ?? (field.control.kind === 'boolean' ? false : []);
          const result = valueAt(parsed.value, field.path);
          // Left as shown where the model had left the property out: still left out (or the same value),
          // so the default that was shown applies again. Anything else comes back exactly as set.
          if (original === undefined && JSON.stringify(chosen) === JSON.stringify(shown) && result === undefined) continue;
          expect(result, field.path.join('.')).toEqual({ value: chosen });
        }
      }),
      { numRuns: PROPERTY_RUNS, plugins: [boundedShrinking()] },
    );
  }, PROPERTY_TIMEOUT);

  it('gives the same block ids with or without a value', () => {
    fc.assert(
      fc.property(ROOT_CASES, ({ schema, value }) => {
        const ids = (initialValue?: unknown) => buildSchemaForm({ schema, initialValue }).fields.map((field) => field.blockId);
        expect(ids(value)).toEqual(ids());
      }),
      { numRuns: Math.ceil(PROPERTY_RUNS / 2), plugins: [boundedShrinking()] },
    );
  }, PROPERTY_TIMEOUT);
});

// ---------------------------------------------------------------------------------------------
// Object defaults and approver edits: guarantee (2). After the approver sets, empties or unticks
// inputs, the parsed input with the schema's defaults applied (as the server applies them: ajv
// `useDefaults`, then the defaults inside unions) holds exactly what the approver left on screen.
// ---------------------------------------------------------------------------------------------

/** A leaf kind, its schema (before nullability), model values and values an approver may set. */
interface LeafKind {
  schema: JsonSchema;
  value: fc.Arbitrary<unknown>;
}
const WORD = fc.stringMatching(/^[a-z]{1,6}$/);
const SMALL_INTEGER = fc.integer({ min: -50, max: 50 }).filter((number) => !Object.is(number, -0));
const LEAF_KINDS: fc.Arbitrary<LeafKind> = fc.oneof(
  fc.constant<LeafKind>({ schema: { type: 'string' }, value: WORD }),
  fc.constant<LeafKind>({ schema: { type: 'integer' }, value: SMALL_INTEGER }),
  fc.constant<LeafKind>({ schema: { type: 'boolean' }, value: fc.boolean() }),
  fc.constant<LeafKind>({ schema: { type: 'string', enum: ['red', 'green', 'blue'] }, value: fc.constantFrom('red', 'green', 'blue') }),
  fc.constant<LeafKind>({ schema: { type: 'array', items: { type: 'string' } }, value: fc.array(WORD, { minLength: 1, maxLength: 3 }) }),
  fc.constant<LeafKind>({ schema: { type: 'array', items: { type: 'string', enum: ['a', 'b', 'c'] } }, value: fc.subarray(['a', 'b', 'c'], { minLength: 1 }) }),
);

interface DefaultsNode {
  schema: JsonSchema;
  /** Values the model (or an object default) may hold here. */
  value: fc.Arbitrary<unknown>;
}

const NULLABILITY = fc.constantFrom('no', 'no', 'anyOf', 'type', 'nullable');

function defaultsLeaf(): fc.Arbitrary<DefaultsNode> {
  return fc.tuple(LEAF_KINDS, NULLABILITY, fc.nat(3)).chain(([kind, nullable, defaultKind]) => {
    const base = kind.schema;
    const schema: JsonSchema =
      nullable === 'anyOf'
        ? { anyOf: [base, { type: 'null' }] }
        : nullable === 'nullable'
          ? { ...base, nullable: true, ...(base.enum ? { enum: [...base.enum, null] } : {}) }
          : nullable === 'type'
            ? { ...base, type: [base.type as string, 'null'], ...(base.enum ? { enum: [...base.enum, null] } : {}) }
            : base;
    const value = nullable === 'no' ? kind.value : fc.oneof({ weight: 3, arbitrary: kind.value }, { weight: 1, arbitrary: fc.constant(null) });
    // No default, a value, or (nullable) a `null` default as pydantic writes `x: int | None = None`.
    if (defaultKind === 0) return fc.constant({ schema, value });
    if (defaultKind === 1 && nullable !== 'no') return fc.constant({ schema: { ...schema, default: null }, value });
    return kind.value.map((chosen) => ({ schema: { ...schema, default: chosen }, value }));
  });
}

/** An object whose default (often) covers some of its properties, nested objects included. */
function defaultsObject(depth: number): fc.Arbitrary<DefaultsNode> {
  const child: fc.Arbitrary<DefaultsNode> = depth >= 3 ? defaultsLeaf() : fc.oneof({ weight: 3, arbitrary: defaultsLeaf() }, { weight: 1, arbitrary: defaultsObject(depth + 1) });
  return fc
    .uniqueArray(fc.tuple(fc.stringMatching(/^[a-z]{1,3}$/), child, fc.nat(5)), { minLength: 1, maxLength: 4, selector: ([name]) => name })
    .chain((entries) => {
      const properties = Object.fromEntries(entries.map(([name, node]) => [name, node.schema]));
      // Required only at the top level (an object default must hold its required properties).
      const required = depth === 1 ? entries.filter(([, , flag]) => flag === 0).map(([name]) => name) : [];
      const value = partialRecord(entries, required);
      const schema: JsonSchema = { type: 'object', properties, ...(required.length > 0 ? { required } : {}), additionalProperties: false };
      if (depth === 1) return fc.constant({ schema, value });
      return fc.oneof(
        { weight: 1, arbitrary: fc.constant<DefaultsNode>({ schema, value }) },
        { weight: 3, arbitrary: value.map((objectDefault): DefaultsNode => ({ schema: { ...schema, default: objectDefault }, value })) },
      );
    });
}

function partialRecord(entries: readonly (readonly [string, DefaultsNode, number])[], required: readonly string[]): fc.Arbitrary<Record<string, unknown>> {
  return fc
    .tuple(...entries.map(([name, node]) => (required.includes(name) ? node.value.map((value) => ({ value })) : fc.option(node.value.map((value) => ({ value })), { nil: undefined, freq: 2 }))))
    .map((values) => Object.fromEntries(values.flatMap((found, index) => (found === undefined ? [] : [[entries[index]![0], found.value]]))));
}

type Edit = { kind: 'set'; chosen: unknown } | { kind: 'empty' };

function settableValue(field: FormField): fc.Arbitrary<unknown> | undefined {
  const control = field.control;
  switch (control.kind) {
    case 'text':
      return WORD;
    case 'number':
      return SMALL_INTEGER;
    case 'boolean':
      return fc.boolean();
    case 'choice':
      return fc.constantFrom(...control.options.filter((option) => option !== null));
    case 'multi-choice':
      return fc.subarray([...control.options], { minLength: 1 });
    case 'list':
      return fc.array(WORD, { minLength: 1, maxLength: 3 });
    default:
      return undefined;
  }
}

const OBJECT_DEFAULT_CASES = defaultsObject(1).chain(({ schema, value }) =>
  value.chain((input) => {
    const form = buildSchemaForm({ schema, initialValue: input });
    const edits = form.blocks.flatMap((block) => {
      if (block.type !== 'input') return [];
      const field = form.fields.find((candidate) => candidate.blockId === block.block_id);
      const setting = field === undefined ? undefined : settableValue(field);
      if (field === undefined || setting === undefined || decodeActionId(String(block.element.action_id)).variant !== 'widget') return [];
      const edit: fc.Arbitrary<Edit | undefined> = fc.oneof(
        { weight: 2, arbitrary: fc.constant(undefined) },
        { weight: 2, arbitrary: setting.map((chosen): Edit => ({ kind: 'set', chosen })) },
        { weight: 1, arbitrary: fc.constant<Edit>({ kind: 'empty' }) },
      );
      return [edit.map((chosen) => ({ field, edit: chosen as Edit | undefined }))];
    });
    return fc.tuple(...edits).map((all) => ({ schema, input, form, edits: all }));
  }),
);

/** `PROPERTY_SEED=123` replays one seed. */
const SEED = process.env.PROPERTY_SEED === undefined ? {} : { seed: Number(process.env.PROPERTY_SEED) };

const defaultsValidator = createJsonSchemaValidator({ applyDefaults: true });

/** The input as the server acts on it: the schema's defaults applied. */
function withDefaults(schema: JsonSchema, input: unknown): unknown {
  const checked = defaultsValidator.validate(schema as JSONSchema7, input);
  expect(checked, `invalid for the schema: ${JSON.stringify(input)}`).toMatchObject({ success: true });
  return fillBranchDefaults({ schema: schema as JSONSchema7, value: (checked as { value: unknown }).value, validator: defaultsValidator });
}

/** What an input shows: the model's value, else the default shown for it (`undefined`: nothing). */
function onScreen(form: SchemaForm, field: FormField, input: unknown): { value: unknown } | undefined {
  const shown = valueAt(input, field.path) ?? shownDefault({ fields: form.fields, field, presences: presencesAlong({ initialValue: input, path: field.path }) });
  return shown === undefined ? undefined : { value: shown.value };
}

/**
 * What an emptied input means (`clearedField`, read as if the model had proposed what it showed):
 * checkboxes `false`, lists and multi-selects `[]`; a nullable input `null`; an input showing `""`
 * gives `""` back, as does a required plain string; an optional input that showed nothing stays left out; otherwise "not set":
 * left out, so the default its hint names (the property's own) applies. `undefined`: left out.
 */
function emptiedMeaning(field: FormField, shown: { value: unknown } | undefined): { value: unknown } | undefined {
  const control = field.control;
  if (shown === undefined && !field.required) return field.defaultValue;
  if ((control.kind === 'boolean' && !field.nullable) || control.kind === 'list' || control.kind === 'multi-choice') {
    if (shown?.value === null && field.nullable) return { value: null };
    return { value: control.kind === 'boolean' ? false : [] };
  }
  if (field.nullable) return { value: null };
  if (shown?.value === '' && control.kind === 'text') return { value: '' };
  // A required string with no `minLength` may be `""` (`requiredEmpty`); any other required input is refused.
  if (field.required && control.kind === 'text' && control.format === 'plain') return { value: '' };
  return field.defaultValue;
}

describe('object defaults under approver edits', () => {
  it('untouched, gives back the model input unchanged', () => {
    fc.assert(
      fc.property(OBJECT_DEFAULT_CASES, ({ form, input }) => {
        expect(parseSchemaForm({ form, stateValues: stateFromBlocks(form.blocks) })).toEqual({ ok: true, value: input });
      }),
      { numRuns: PROPERTY_RUNS, plugins: [boundedShrinking()], ...SEED },
    );
  });

  it('with the defaults applied, holds what the approver left on screen in every input', () => {
    fc.assert(
      fc.property(OBJECT_DEFAULT_CASES, ({ schema, input, form, edits }) => {
        const untouched = stateFromBlocks(form.blocks);
        const stateValues = stateFromBlocks(form.blocks);
        for (const entry of edits) {
          const { field, edit } = entry;
          if (edit === undefined) continue;
          const typed = edit.kind === 'set' ? field.path.reduceRight<unknown>((inner, name) => Object.defineProperty({}, name, { value: inner, enumerable: true }), edit.chosen) : {};
          stateValues[field.blockId] = stateFromInput(form, typed)[field.blockId]!;
          // Ticking a box that was ticked, or emptying an empty input, leaves it untouched.
          if (JSON.stringify(stateValues[field.blockId]) === JSON.stringify(untouched[field.blockId])) entry.edit = undefined;
        }
        const parsed = parseSchemaForm({ form, stateValues });
        if (!parsed.ok) {
          // Only an emptied (or untouched) required input may be refused.
          const refused = Object.keys(parsed.errors);
          expect(refused.filter((blockId) => edits.some(({ field, edit }) => field.blockId === blockId && (edit?.kind === 'set' || !field.required)))).toEqual([]);
          return;
        }
        const before = withDefaults(schema, input);
        const after = withDefaults(schema, parsed.value);
        for (const { field, edit } of edits) {
          const shown = onScreen(form, field, input);
          const got = valueAt(after, field.path);
          const label = `${field.path.join('.')} (${edit === undefined ? 'untouched' : edit.kind === 'set' ? `set ${JSON.stringify(edit.chosen)}` : 'emptied'}, showed ${JSON.stringify(shown)}) in ${JSON.stringify(parsed.value)}`;
          const expected = edit === undefined ? shown : edit.kind === 'set' ? { value: edit.chosen } : emptiedMeaning(field, shown);
          if (got === undefined && expected !== undefined) {
            // Left out with the object around it, and no default brings the object in: an object whose
            // inputs were all left blank (emptied, or untouched and missing before) is left out (`collapse`).
            const parent = valueAt(after, field.path.slice(0, -1));
            if (parent === undefined && (edit?.kind === 'empty' || (edit === undefined && valueAt(before, field.path) === undefined))) continue;
          }
          expect(got, label).toEqual(expected);
        }
      }),
      { numRuns: PROPERTY_RUNS, plugins: [boundedShrinking()], ...SEED },
    );
  }, PROPERTY_TIMEOUT);
});
