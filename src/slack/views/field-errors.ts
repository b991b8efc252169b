import type { JsonSchemaIssue } from '../../tools/json-schema-validator.js';

interface FieldLike {
  blockId: string;
  path: readonly string[];
  control: { kind: string };
}

/**
 * Puts each server-side validation issue on the form field it concerns: the field whose path is
 * the longest prefix of the issue's path (a JSON field covers everything below it). Issues about
 * the whole value, or about nothing on the form, go on the first field so they are still seen.
 */
export function issuesToFieldErrors(issues: readonly JsonSchemaIssue[], fields: readonly FieldLike[]): Record<string, string> {
  const inputs = fields.filter((field) => field.control.kind !== 'group');
  const errors: Record<string, string> = {};
  for (const issue of issues) {
    const path = issue.path.map(String);
    let best: FieldLike | undefined;
    for (const field of inputs) {
      const covers = field.path.every((name, index) => path[index] === name);
      if (covers && (!best || field.path.length > best.path.length)) best = field;
    }
    const target = best ?? inputs[0];
    if (!target) continue;
    const label = best && path.length > best.path.length ? `${path.slice(best.path.length).join('.')}: ` : '';
    const message = `${label}${issue.message}`;
    errors[target.blockId] = errors[target.blockId] ? `${errors[target.blockId]}; ${message}` : message;
  }
  for (const [blockId, message] of Object.entries(errors)) errors[blockId] = message.length > 300 ? `${message.slice(0, 299)}…` : message;
  return errors;
}

/**
 * The fields of a form that are Slack inputs: the only blocks Slack shows errors under. Group
 * headings and values kept unchanged (too large for an input) are fields too, but not inputs.
 */
export function inputFieldsOf<FIELD extends { blockId: string }>(form: { fields: readonly FIELD[]; inputBlockIds: readonly string[] }): FIELD[] {
  const inputs = new Set(form.inputBlockIds);
  return form.fields.filter((field) => inputs.has(field.blockId));
}
