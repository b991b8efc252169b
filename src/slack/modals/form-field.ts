import type { NumberRules, Primitive, ScalarItemShape, TextRules } from './schema-shape.js';

/**
 * Which Slack element a string becomes; every one of them still parses back to a string. `time`
 * is any time of day (`07:45`, `07:45:00`); `full-time` one with seconds and a time zone.
 */
export type TextFormat = 'plain' | 'email' | 'url' | 'date' | 'date-time' | 'time' | 'full-time';

/**
 * How the validator that checks the submitted value reads `format: "time"`. `full-time`: as JSON
 * Schema says and ajv-formats checks it (MCP and `jsonSchema()` tools, `ask_user` answers), RFC
 * 3339's full-time with seconds and a time zone, so the form asks for that too. `loose`: the
 * validator does not check it (zod writes its own times as a `pattern`), and `HH:mm` is kept.
 */
export type TimeFormat = 'loose' | 'full-time';

export type FieldControl =
  | { kind: 'text'; format: TextFormat; multiline: boolean; rules: TextRules }
  | { kind: 'number'; rules: NumberRules }
  | { kind: 'boolean' }
  /** `text_input` when the options do not fit a Slack menu; the answer is checked against them. */
  | { kind: 'choice'; options: readonly Primitive[]; widget: 'radio_buttons' | 'static_select' | 'text_input' }
  | { kind: 'multi-choice'; options: readonly Primitive[]; widget: 'checkboxes' | 'multi_static_select'; minItems?: number; maxItems?: number }
  /** One item per line; `allowed` when the items come from an enum too large for a menu; `timeFormat` when item times need a zone. */
  | { kind: 'list'; item: ScalarItemShape; allowed?: readonly string[]; minItems?: number; maxItems?: number; timeFormat?: 'full-time' }
  | { kind: 'json' }
  /** The properties of the object at `path` that did not fit in the form, edited together as a JSON object. */
  | { kind: 'rest'; properties: readonly { name: string; required: boolean }[] }
  /** A nested object (or, with an empty path, the whole form): a heading, not an input. */
  | { kind: 'group'; depth: number; propertyNames: readonly string[]; extraProperties: 'allowed' | 'forbidden' };

export interface FormField {
  /**
   * `f:0`, `f:1`, …: short, and derived from the schema alone, so the submit handler can rebuild
   * the fields without the value the form was opened with.
   */
  blockId: string;
  /** Property names from the top; empty for the whole value (or the whole form, for its group). */
  path: readonly string[];
  label: string;
  /** From `description` and `default`, already within Slack's limits. */
  hint?: string;
  /** Listed in its object's `required` (the whole value always is). */
  required: boolean;
  nullable: boolean;
  defaultValue?: { value: unknown };
  /** Inside an object that may be left out or null: Slack must not insist on a value here. */
  insideOptionalObject: boolean;
  control: FieldControl;
}

export function isGroup(field: FormField): field is FormField & { control: { kind: 'group' } } {
  return field.control.kind === 'group';
}

export function samePath(left: readonly string[], right: readonly string[]): boolean {
  return left.length === right.length && left.every((name, index) => right[index] === name);
}

/** Whether `child` sits directly inside the object at `parent`. */
export function isDirectChild(parent: readonly string[], child: readonly string[]): boolean {
  return child.length === parent.length + 1 && parent.every((name, index) => child[index] === name);
}

/** JSON Schema `format` → the element that collects it; unknown formats are plain text. */
export function textFormatOf(format: string | undefined, timeFormat: TimeFormat = 'loose'): TextFormat {
  switch (format?.toLowerCase()) {
    case 'email':
    case 'idn-email':
      return 'email';
    case 'uri':
    case 'url':
    case 'iri':
      return 'url';
    case 'date':
      return 'date';
    case 'date-time':
      return 'date-time';
    case 'time':
      return timeFormat === 'full-time' ? 'full-time' : 'time';
    default:
      return 'plain';
  }
}
