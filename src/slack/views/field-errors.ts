import type { JsonSchemaIssue } from '../../tools/json-schema-validator.js';
import { groupAsJsonField } from '../modals/group-as-json.js';
import type { FormField } from '../modals/form-field.js';

interface FieldLike {
  blockId: string;
  path: readonly string[];
  /** A rest field (`kind: 'rest'`) lists the properties it holds. */
  control: { kind: string; properties?: readonly { name: string }[] };
}

/**
 * Puts each server-side validation issue on the form field it concerns: the field whose path is
 * the longest prefix of the issue's path (a JSON field covers everything below it; the "Other
 * fields" JSON field only the properties it holds, though its path is its object's). An issue about
 * an object shown as several inputs goes on its first input, naming the object; issues about the
 * whole value go on the first field so they are still seen, and about nothing on the form, on the
 * "Other fields" field if there is one, else on the first field.
 */
export function issuesToFieldErrors(issues: readonly JsonSchemaIssue[], fields: readonly FieldLike[]): Record<string, string> {
  const inputs = fields.filter((field) => field.control.kind !== 'group');
  const errors: Record<string, string> = {};
  for (const issue of issues) {
    const path = issue.path.map(String);
    let best: FieldLike | undefined;
    for (const field of inputs) {
      if (covers(field, path) && (!best || field.path.length > best.path.length)) best = field;
    }
    // No input holds the whole path (an object's own rule, such as `dependencies`): the issue goes on
    // the object's first input, else the form's first, and names the path so it is not read as
    // being about that input.
    const rest = inputs.find((field) => field.control.kind === 'rest');
    const target = best ?? inputs.find((field) => isBelow(field.path, path)) ?? rest ?? inputs[0];
    if (!target) continue;
    const unnamed = best ? issue.path.slice(best.path.length) : issue.path;
    const label = unnamed.length > 0 ? `${pathLabel(unnamed)}: ` : '';
    const message = `${label}${issue.message}`;
    errors[target.blockId] = errors[target.blockId] ? `${errors[target.blockId]}; ${message}` : message;
  }
  for (const [blockId, message] of Object.entries(errors)) errors[blockId] = message.length > 300 ? `${message.slice(0, 299)}…` : message;
  return errors;
}

/**
 * Whether the field holds the value at `path`. The rest field's path is its object's, but it holds
 * only some of the object's properties: an issue about the object itself, or about a property with
 * inputs of its own, is not about it.
 */
function covers(field: FieldLike, path: readonly string[]): boolean {
  if (!field.path.every((name, index) => path[index] === name)) return false;
  if (field.control.kind !== 'rest') return true;
  const property = path[field.path.length];
  return property !== undefined && (field.control.properties ?? []).some(({ name }) => name === property);
}

/**
 * `limits.cpu`, `Item 3`, `hosts, item 3, name`: property names joined by dots, and list items
 * (numbers in the path) counted from one, as the form's own messages count them.
 */
function pathLabel(path: readonly (string | number)[]): string {
  const parts: string[] = [];
  let names: string[] = [];
  for (const segment of path) {
    if (typeof segment === 'string') {
      names.push(segment);
      continue;
    }
    if (names.length > 0) parts.push(names.join('.'));
    names = [];
    parts.push(`item ${segment + 1}`);
  }
  if (names.length > 0) parts.push(names.join('.'));
  const label = parts.join(', ');
  return typeof path[0] === 'number' ? `${label.charAt(0).toUpperCase()}${label.slice(1)}` : label;
}

function isBelow(fieldPath: readonly string[], objectPath: readonly string[]): boolean {
  return fieldPath.length > objectPath.length && objectPath.every((name, index) => fieldPath[index] === name);
}

/**
 * The fields of a form that are Slack inputs: the only blocks Slack shows errors under. Group
 * headings and values kept unchanged (too large for an input) are fields too, but not inputs.
 * A group whose value is not an object is shown as one JSON input under its own block id
 * (`showsGroupAsJson`): it is returned as that JSON field, so it holds every issue below its path.
 */
export function inputFieldsOf(form: { fields: readonly FormField[]; inputBlockIds: readonly string[] }): FormField[] {
  const inputs = new Set(form.inputBlockIds);
  return form.fields.filter((field) => inputs.has(field.blockId)).map((field) => (field.control.kind === 'group' ? groupAsJsonField(field) : field));
}
