import { SLACK_LIMITS, truncateText } from '../blocks/limits.js';
import { offersNone, optionText } from './choice-element.js';
import { fieldHint, fieldLabel, HINT_LENGTH } from './field-labels.js';
import { textFormatOf, type FieldControl, type FormField, type TimeFormat } from './form-field.js';
import type { JsonSchemaDefinition } from './json-schema.js';
import { minimumFieldBytes } from './render-field.js';
import { createSchemaReader, type PropertyShape, type SchemaShape } from './schema-shape.js';

/** Slack allows 100 blocks in a modal; the caller keeps a few for its own header and context. */
export const FORM_BLOCK_LIMIT = 95;
/** One block stays free for the note about properties the schema does not know. */
const FIELD_BLOCK_LIMIT = FORM_BLOCK_LIMIT - 1;
/**
 * Bytes of blocks before any value is filled in (labels, hints, menus). A hundred 100-option menus
 * would be megabytes; the cap leaves half of the form's 200 kB for the values.
 */
const STATIC_BYTE_LIMIT = 100_000;
const REST_RESERVE_BYTES = 4_000;
/** `resources.limits` is a group of inputs; anything nested deeper is edited as JSON. */
const MAX_GROUP_DEPTH = 2;
/** Radio buttons read best for a handful of choices; more go in a menu. */
const RADIO_BUTTON_LIMIT = 5;
const CHECKBOX_LIMIT = SLACK_LIMITS.optionsPerCheckboxGroup;
/** Names and descriptions that promise more than a line of text. */
const LONG_TEXT_NAME = /(body|description|message|script|reason|comment|notes?|content|details|summary|markdown|prompt|query|template)$/i;
const LONG_TEXT_DESCRIPTION = /\b(multi-?line|script|markdown|body of)\b/i;

type Draft = Omit<FormField, 'blockId'>;

interface Placement {
  path: readonly string[];
  required: boolean;
  insideOptionalObject: boolean;
}

/** What every level of the walk reads the schema with. */
interface Reading {
  describe: (definition: JsonSchemaDefinition) => SchemaShape;
  timeFormat: TimeFormat;
}

/**
 * The form's fields for a schema, in schema order: one input per property, a group heading per
 * nested object (to depth 2), and, when a schema has more fields than a modal holds, one JSON
 * field for the rest. Derived from the schema alone, so a submit handler gets the same fields
 * (and block ids) back from `buildSchemaFields({ schema })` as the form was built with.
 *
 * For an object schema the first field is the form itself (a group with an empty path); it has
 * no block. `timeFormat` says how the caller's validator reads `format: "time"` (see `TimeFormat`).
 */
export function buildSchemaFields({ schema, blockIdPrefix = 'f', timeFormat = 'loose' }: { schema: JsonSchemaDefinition; blockIdPrefix?: string; timeFormat?: TimeFormat }): FormField[] {
  // Ids are the prefix plus at most `:notice`; Slack allows 255 characters.
  if (blockIdPrefix.length > 200) throw new RangeError(`blockIdPrefix is ${blockIdPrefix.length} characters; keep it short`);
  const reading: Reading = { describe: createSchemaReader(schema), timeFormat };
  const shape = reading.describe(schema);
  if (shape.kind !== 'object') {
    return [{ ...leafDraft(shape, { path: [], required: true, insideOptionalObject: false }, timeFormat), blockId: `${blockIdPrefix}:0` }];
  }
  const form: FormField = {
    blockId: `${blockIdPrefix}:form`,
    path: [],
    label: fieldLabel({ path: [], title: shape.title, fallback: 'Form' }),
    required: true,
    nullable: shape.nullable,
    insideOptionalObject: false,
    control: { kind: 'group', depth: 0, propertyNames: shape.properties.map((property) => property.name), extraProperties: shape.extraProperties },
  };
  const measure = (drafts: readonly Draft[]): number => drafts.reduce((total, draft) => total + minimumFieldBytes({ ...draft, blockId: `${blockIdPrefix}:00` }), 0);
  const drafts = fitProperties({ properties: shape.properties, reading, measure });
  return [form, ...drafts.map((draft, index) => ({ ...draft, blockId: `${blockIdPrefix}:${index}` }))];
}

/**
 * Takes properties in order while they fit, always keeping room for one more block: a property
 * whose group is too big becomes one JSON field, and once even that does not fit, it and all
 * later properties share a single JSON field, so no property is ever dropped.
 */
function fitProperties({
  properties,
  reading,
  measure,
}: {
  properties: readonly PropertyShape[];
  reading: Reading;
  measure: (drafts: readonly Draft[]) => number;
}): Draft[] {
  const { describe, timeFormat } = reading;
  const taken: Draft[] = [];
  let bytes = 0;
  for (const [index, property] of properties.entries()) {
    const isLast = index === properties.length - 1;
    const reserveBlocks = isLast ? 0 : 1;
    const reserveBytes = isLast ? 0 : REST_RESERVE_BYTES;
    const placement: Placement = { path: [property.name], required: property.required, insideOptionalObject: false };
    const subtree = propertyDrafts(describe(property.schema), placement, reading);
    const candidates = subtree.length > 1 ? [subtree, [leafDraft(asJson(describe(property.schema)), placement, timeFormat)]] : [subtree];
    const fitting = candidates
      .map((drafts) => ({ drafts, size: measure(drafts) }))
      .find(({ drafts, size }) => taken.length + drafts.length + reserveBlocks <= FIELD_BLOCK_LIMIT && bytes + size + reserveBytes <= STATIC_BYTE_LIMIT);
    if (fitting === undefined) {
      taken.push(restDraft(properties.slice(index)));
      break;
    }
    taken.push(...fitting.drafts);
    bytes += fitting.size;
  }
  return taken;
}

function propertyDrafts(shape: SchemaShape, placement: Placement, reading: Reading): Draft[] {
  const depth = placement.path.length;
  if (shape.kind !== 'object' || depth > MAX_GROUP_DEPTH) return [leafDraft(shape, placement, reading.timeFormat)];
  const group: Draft = {
    path: placement.path,
    label: fieldLabel({ path: placement.path, title: shape.title }),
    hint: fieldHint({ description: shape.description }),
    required: placement.required,
    nullable: shape.nullable,
    // Its inputs show it when the model left the object out (see shownDefault).
    defaultValue: shape.defaultValue,
    insideOptionalObject: placement.insideOptionalObject,
    control: { kind: 'group', depth, propertyNames: shape.properties.map((property) => property.name), extraProperties: shape.extraProperties },
  };
  const childrenOptional = placement.insideOptionalObject || !placement.required || shape.nullable;
  return [
    group,
    ...shape.properties.flatMap((property) =>
      propertyDrafts(reading.describe(property.schema), { path: [...placement.path, property.name], required: property.required, insideOptionalObject: childrenOptional }, reading),
    ),
  ];
}

function leafDraft(shape: SchemaShape, placement: Placement, timeFormat: TimeFormat): Draft {
  const base = {
    path: placement.path,
    label: fieldLabel({ path: placement.path, title: shape.title }),
    hint: fieldHint({ description: shape.description, defaultValue: shape.defaultValue }),
    required: placement.required,
    nullable: shape.nullable,
    defaultValue: shape.defaultValue,
    insideOptionalObject: placement.insideOptionalObject,
  };
  return { ...base, control: controlFor(shape, { ...base, name: placement.path.at(-1) ?? '', timeFormat }) };
}

function controlFor(shape: SchemaShape, context: Pick<FormField, 'required' | 'nullable' | 'insideOptionalObject'> & { name: string; timeFormat: TimeFormat }): FieldControl {
  switch (shape.kind) {
    case 'string': {
      const { format, minLength, maxLength, pattern } = shape;
      const textFormat = textFormatOf(format, context.timeFormat);
      const multiline =
        textFormat === 'plain' &&
        ((maxLength ?? 0) > 150 || format === 'textarea' || LONG_TEXT_NAME.test(context.name) || LONG_TEXT_DESCRIPTION.test(shape.description ?? ''));
      return { kind: 'text', format: textFormat, multiline, rules: { format, minLength, maxLength, pattern } };
    }
    case 'number': {
      const { integer, minimum, maximum, exclusiveMinimum, exclusiveMaximum, multipleOf } = shape;
      return { kind: 'number', rules: { integer, minimum, maximum, exclusiveMinimum, exclusiveMaximum, multipleOf } };
    }
    case 'boolean':
      return { kind: 'boolean' };
    case 'enum': {
      const fitsMenu = shape.values.every((value) => optionText(value).length <= SLACK_LIMITS.optionTextLength);
      const menuSize = shape.values.length + (offersNone(context) ? 1 : 0);
      if (fitsMenu && shape.values.length <= RADIO_BUTTON_LIMIT) return { kind: 'choice', options: shape.values, widget: 'radio_buttons' };
      if (fitsMenu && menuSize <= SLACK_LIMITS.optionsPerSelect) return { kind: 'choice', options: shape.values, widget: 'static_select' };
      if (shape.values.every((value) => typeof value === 'string')) return { kind: 'choice', options: shape.values, widget: 'text_input' };
      return { kind: 'json' };
    }
    case 'enum-array': {
      const { values, minItems, maxItems } = shape;
      const fitsMenu = values.every((value) => optionText(value).length <= SLACK_LIMITS.optionTextLength);
      if (fitsMenu && values.length <= CHECKBOX_LIMIT) return { kind: 'multi-choice', options: values, widget: 'checkboxes', minItems, maxItems };
      if (fitsMenu && values.length <= SLACK_LIMITS.optionsPerSelect) return { kind: 'multi-choice', options: values, widget: 'multi_static_select', minItems, maxItems };
      if (values.every((value) => typeof value === 'string')) {
        return { kind: 'list', item: { kind: 'string' }, allowed: values as readonly string[], minItems, maxItems };
      }
      return { kind: 'json' };
    }
    case 'scalar-array': {
      // Only then, so the layout of every other list stays as it was.
      const zoned = shape.item.kind === 'string' && textFormatOf(shape.item.format, context.timeFormat) === 'full-time';
      return { kind: 'list', item: shape.item, minItems: shape.minItems, maxItems: shape.maxItems, ...(zoned ? { timeFormat: 'full-time' as const } : {}) };
    }
    case 'object':
    case 'json':
      return { kind: 'json' };
  }
}

function restDraft(properties: readonly PropertyShape[]): Draft {
  const names = properties.map((property) => property.name).join(', ');
  return {
    path: [],
    label: 'Other fields (JSON)',
    hint: truncateText(`More fields than one form holds, edited here as one JSON object: ${names}`, HINT_LENGTH),
    required: false,
    nullable: false,
    insideOptionalObject: false,
    control: { kind: 'rest', properties: properties.map(({ name, required }) => ({ name, required })) },
  };
}

function asJson({ nullable, title, description, defaultValue }: SchemaShape): SchemaShape {
  return { kind: 'json', nullable, title, description, defaultValue };
}
