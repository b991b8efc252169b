import { valueAt } from './field-presence.js';
import type { FormField } from './form-field.js';
import { isRecord } from './json-schema.js';

/**
 * A nested object's group of inputs can only show an object. The value the form opens with may
 * hold something else there: `properties` without `type` constrains objects only, so a string, an
 * array or `null` is valid (and an MCP server accepted it), and the model may send anything. Such
 * a value is shown as one JSON input in the group's place, as a leaf shows a value its widget
 * cannot hold, so it is seen and comes back as it was unless the approver changes it. A `null`
 * the group may hold stays a group: its inputs left blank give `null` back.
 */
export function showsGroupAsJson(group: FormField, initialValue: unknown): boolean {
  if (group.control.kind !== 'group' || group.path.length === 0) return false;
  const found = valueAt(initialValue, group.path);
  if (found === undefined || isRecord(found.value)) return false;
  return !(found.value === null && group.nullable);
}

/** The group as one JSON input: same block id and path, read and written as a whole value. */
export function groupAsJsonField(group: FormField): FormField {
  return { ...group, control: { kind: 'json' } };
}

/** Whether `field` sits anywhere below the object at `group`. */
export function isBelowGroup(group: FormField, field: FormField): boolean {
  return field.path.length > group.path.length && group.path.every((name, index) => field.path[index] === name);
}
