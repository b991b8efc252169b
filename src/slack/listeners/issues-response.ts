import type { JsonSchemaIssue } from '../../tools/json-schema-validator.js';
import type { FormField } from '../modals/form-field.js';
import { formErrors } from '../views/edit-call-view.js';
import { inputFieldsOf, issuesToFieldErrors } from '../views/field-errors.js';
import { submittedInputFields } from './submitted-input-fields.js';

/**
 * The ack for a submitted value the tool's schema refused: each issue under the input it concerns.
 * Never an empty `errors` object, which Slack shows as nothing while the form still cannot be
 * submitted: when no field of the rebuilt form holds an issue, the issues go on the first input of
 * the view as submitted (or, with no input at all, replace the form).
 */
export function issuesResponse(options: {
  issues: readonly JsonSchemaIssue[];
  form: { fields: readonly FormField[]; inputBlockIds: readonly string[] };
  view: { blocks?: ReadonlyArray<{ type: string; block_id?: string }> };
}) {
  const errors = issuesToFieldErrors(options.issues, inputFieldsOf(options.form));
  if (Object.keys(errors).length > 0) return { response_action: 'errors' as const, errors };
  // A field covering the whole value words every issue with its path.
  const whole = issuesToFieldErrors(options.issues, [{ blockId: 'whole', path: [], control: { kind: 'json' } }]).whole;
  return formErrors({ fields: submittedInputFields(options.view), message: whole ?? 'The tool refused these values; nothing changed.' });
}
