import type { App, ViewSubmitAction } from '@slack/bolt';
import type { Logger } from 'pino';
import type { AuditLog } from '../../audit/audit-log.js';
import type { CallDecider } from '../../approvals/decide-call.js';
import type { ThreadMessenger } from '../../conversation/thread-messenger.js';
import type { StateStore } from '../../store/state-store.js';
import type { ToolSchemas } from '../../tools/tool-schemas.js';
import { APPROVAL_ACTION_IDS, decodeCallFormMetadata } from '../blocks/action-ids.js';
import type { ChannelsOf } from '../channel-membership.js';
import { formLayoutKey, readFormLayout, withFormLayout } from '../modals/form-layout.js';
import { buildSchemaForm, parseSchemaForm, type TimeFormat } from '../modals/schema-form.js';
import { EDIT_CALL_CALLBACK_ID, editCallView, formErrors } from '../views/edit-call-view.js';
import { inputFieldsOf } from '../views/field-errors.js';
import { createOrganisationMembership, type OrganisationMembership } from '../organisation-membership.js';
import { ackRecorded } from './ack-recorded.js';
import { actorOf } from './approval-actions.js';
import { callAsShown, registerCallModalButton } from './call-modal-button.js';
import { formChannel } from './form-channel.js';
import { isUnreadable, readCall } from './read-call.js';
import { issuesResponse } from './issues-response.js';
import { submittedInputFields } from './submitted-input-fields.js';

export const SCHEMA_CHANGED_TEXT = "The tool's parameters changed since this form opened, so nothing changed. Close this form and open Edit again.";

/** Said on a click on Edit, and on a submit, when the call's tool is no longer loaded (an MCP server gone or restarting). */
export function toolUnavailableText(toolName: string): string {
  return `The tool ${toolName} is not available any more, so it cannot be edited.`;
}

export interface EditCallOptions {
  store: StateStore;
  decider: CallDecider;
  messenger: ThreadMessenger;
  toolSchemas: ToolSchemas;
  logger: Logger;
  /** Where a refused click on the button is recorded. */
  audit: AuditLog;
  organisationMembership?: OrganisationMembership;
  /** Which channels a person is in: a submit claiming the thread's channel counts as made there only for its members (`formChannel`). */
  channelsOf: ChannelsOf;
}

/**
 * Edit: a modal generated from the tool's JSON Schema (the one the model saw), prefilled with the
 * input as the card shows it. A valid submit is a new version of the input, approved by the editor
 * when they may approve it; everything the form produces is validated again on the server against
 * the tool's own schema, and the version it started from must still be the current one. A card
 * older than the current input opens no form (its text would not be what the form shows).
 */
export function registerEditCall(app: App, { store, decider, messenger, toolSchemas, logger, audit, channelsOf, organisationMembership = createOrganisationMembership({ logger }) }: EditCallOptions): void {
  registerCallModalButton(app, {
    actionId: APPROVAL_ACTION_IDS.edit,
    buttonLabel: 'Edit',
    store,
    messenger,
    logger,
    organisationMembership,
    refusalAudit: { audit, action: 'edit' },
    decider,
    onlyForCurrentInput: true,
    async view({ step, call, privateMetadata }) {
      const schema = await toolSchemas.jsonSchema(call.toolName);
      if (!schema) return toolUnavailableText(call.toolName);
      const form = buildSchemaForm({ schema, initialValue: call.input, timeFormat: timeFormatOf(toolSchemas, call.toolName) });
      return editCallView({ step, call, form, privateMetadata: withFormLayout({ privateMetadata, layoutKey: formLayoutKey(form.fields) }) });
    },
  });

  app.view<ViewSubmitAction>(EDIT_CALL_CALLBACK_ID, async ({ ack, body, view, client }) => {
    const opened = readFormLayout(view.private_metadata);
    const reference = decodeCallFormMetadata(opened.privateMetadata);
    const lookup = reference ? await readCall({ store, logger, reference }) : undefined;
    // The form stays as filled in, so the person can submit it again.
    if (isUnreadable(lookup)) return ack(formErrors({ fields: submittedInputFields(view), message: lookup.message }));
    if (!reference || !lookup?.call) {
      return ack(formErrors({ fields: [], message: lookup && !lookup.open ? lookup.message : 'This request is no longer open.' }));
    }
    const schema = await toolSchemas.jsonSchema(lookup.call.toolName);
    if (!schema) {
      if (!lookup.open) return ack(formErrors({ fields: [], message: lookup.message }));
      // The request is still open: say what happened, as a click on Edit does. The form stays as filled in,
      // so it can be submitted again should the tool come back (an MCP server restarting).
      return ack(formErrors({ fields: submittedInputFields(view), message: `${toolUnavailableText(lookup.call.toolName)} Nothing changed.` }));
    }
    // Rebuilt server-side from the stored call: nothing in the submitted view is trusted but its values.
    const form = buildSchemaForm({ schema, initialValue: callAsShown(lookup.call).input, timeFormat: timeFormatOf(toolSchemas, lookup.call.toolName) });
    if (!lookup.open) return ack(formErrors({ fields: inputFieldsOf(form), message: lookup.message }));
    // Inputs are read by position, so a schema that changed while the form was open (an MCP server
    // restarted or upgraded) would put each value into another property, approved in the editor's
    // name. A form without a key predates it and cannot be checked either.
    if (opened.layoutKey !== formLayoutKey(form.fields)) return ack(formErrors({ fields: submittedInputFields(view), message: SCHEMA_CHANGED_TEXT }));
    const parsed = parseSchemaForm({ form, stateValues: view.state.values as never });
    if (!parsed.ok) return ack({ response_action: 'errors', errors: parsed.errors });
    const validated = await toolSchemas.validate(lookup.call.toolName, parsed.value);
    if (!validated.success) return ack(issuesResponse({ issues: validated.issues, form, view }));

    const from = await formChannel({ claimed: reference.channel, threadChannel: lookup.step.channel, userId: body.user.id, channelsOf });
    const outcome = await decider.record({
      stepId: reference.stepId,
      approvalId: reference.approvalId,
      ...(await actorOf({ body, channel: from.channel, membership: organisationMembership, client })),
      action: { kind: 'edit', fromVersion: reference.version ?? 0, input: validated.value, submittedInput: parsed.value },
    });
    if (!outcome.recorded) {
      await ackRecorded(() => ack(formErrors({ fields: inputFieldsOf(form), message: from.refusal ?? outcome.message })), { logger, callbackId: EDIT_CALL_CALLBACK_ID });
      // Answered first: then whatever the refusal set off (an expiry updating the cards) is seen through.
      return decider.publish(outcome);
    }
    await ackRecorded(ack, { logger, callbackId: EDIT_CALL_CALLBACK_ID });
    if (outcome.notice) await messenger.postEphemeral({ channel: reference.channel, userId: body.user.id, threadTs: outcome.step.threadTs, text: outcome.notice }).catch(() => {});
    await decider.publish(outcome);
  });
}

/** ajv (JSON-Schema-only tools) refuses a `time` without seconds and a time zone; zod tools write their own times as a `pattern`. */
function timeFormatOf(toolSchemas: ToolSchemas, toolName: string): TimeFormat {
  return toolSchemas.validatedWith(toolName) === 'json-schema' ? 'full-time' : 'loose';
}
