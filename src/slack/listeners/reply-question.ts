import type { App, ViewSubmitAction } from '@slack/bolt';
import type { Logger } from 'pino';
import type { AuditLog } from '../../audit/audit-log.js';
import type { CallDecider } from '../../approvals/decide-call.js';
import { isQuestion, type PendingCall } from '../../approvals/pending-step.js';
import { questionRefusalText } from '../../approvals/question-answerers.js';
import { CHOOSE_AN_OPTION_TEXT, questionOptionsOf } from '../../approvals/question-options.js';
import type { ThreadMessenger } from '../../conversation/thread-messenger.js';
import type { StateStore } from '../../store/state-store.js';
import { answerSchemaOf, type AskUserInput } from '../../tools/ask-user.js';
import type { JsonSchemaValidator } from '../../tools/json-schema-validator.js';
import { APPROVAL_ACTION_IDS, decodeCallFormMetadata } from '../blocks/action-ids.js';
import type { ChannelsOf } from '../channel-membership.js';
import { buildSchemaForm, parseSchemaForm } from '../modals/schema-form.js';
import { formErrors } from '../views/edit-call-view.js';
import { inputFieldsOf } from '../views/field-errors.js';
import { REPLY_CALLBACK_ID, replyView } from '../views/reply-view.js';
import { registerCallModalButton } from './call-modal-button.js';
import { mayAnswer } from './answer-question.js';
import { createOrganisationMembership, type OrganisationMembership } from '../organisation-membership.js';
import { ackRecorded } from './ack-recorded.js';
import { actorOf } from './approval-actions.js';
import { formChannel } from './form-channel.js';
import { isUnreadable, readCall } from './read-call.js';
import { issuesResponse } from './issues-response.js';
import { submittedInputFields } from './submitted-input-fields.js';

export interface ReplyQuestionOptions {
  store: StateStore;
  decider: CallDecider;
  messenger: ThreadMessenger;
  validator: JsonSchemaValidator;
  logger: Logger;
  /** Where a refused click on the button is recorded. */
  audit: AuditLog;
  organisationMembership?: OrganisationMembership;
  /** Which channels a person is in: a submit claiming the thread's channel counts as made there only for its members (`formChannel`). */
  channelsOf: ChannelsOf;
}

/**
 * "Reply" on an `ask_user` question without options: a form generated from the model's answer
 * schema; the answer is validated against that schema (ajv) before it becomes the tool result. A
 * question with options shows no Reply; a click or a submit that names one anyway (an old or forged
 * payload) is refused, since its answer is one of the options the model offered.
 */
export function registerReplyQuestion(app: App, { store, decider, messenger, validator, logger, audit, channelsOf, organisationMembership = createOrganisationMembership({ logger }) }: ReplyQuestionOptions): void {
  const formFor = (call: PendingCall) => {
    const schema = answerSchemaOf(call.input as AskUserInput, (candidate) => validator.isUsable(candidate));
    // The answer is validated with ajv, which refuses a `time` without seconds and a time zone.
    return { schema, form: buildSchemaForm({ schema, timeFormat: 'full-time' }) };
  };

  registerCallModalButton(app, {
    actionId: APPROVAL_ACTION_IDS.reply,
    buttonLabel: 'Reply',
    store,
    messenger,
    logger,
    organisationMembership,
    refusalAudit: { audit, action: 'answer' },
    decider,
    view({ step, call, userId, privateMetadata }) {
      if (!isQuestion(call)) return 'This is not a question.';
      // Refused as the decider refuses the answer itself (code and text), so it is audited the same way.
      if (!mayAnswer(step, userId)) return { refused: { code: 'not-requester', reason: questionRefusalText({ requesterId: step.requesterId, channel: step.channel, verb: 'answer' }) } };
      if (questionOptionsOf(call).length > 0) return { refused: { code: 'not-an-option', reason: CHOOSE_AN_OPTION_TEXT } };
      return replyView({ call, form: formFor(call).form, privateMetadata });
    },
  });

  app.view<ViewSubmitAction>(REPLY_CALLBACK_ID, async ({ ack, body, view, client }) => {
    const reference = decodeCallFormMetadata(view.private_metadata);
    const lookup = reference ? await readCall({ store, logger, reference }) : undefined;
    // The form stays as filled in, so the person can submit it again.
    if (isUnreadable(lookup)) return ack(formErrors({ fields: submittedInputFields(view), message: lookup.message }));
    if (!reference || !lookup?.call || !isQuestion(lookup.call)) return ack(formErrors({ fields: [], message: 'This question is no longer open.' }));
    const { schema, form } = formFor(lookup.call);
    if (!lookup.open) return ack(formErrors({ fields: inputFieldsOf(form), message: lookup.message }));
    if (questionOptionsOf(lookup.call).length > 0) return ack(formErrors({ fields: inputFieldsOf(form), message: CHOOSE_AN_OPTION_TEXT }));
    const parsed = parseSchemaForm({ form, stateValues: view.state.values as never });
    if (!parsed.ok) return ack({ response_action: 'errors', errors: parsed.errors });
    const validated = validator.validate(schema, parsed.value);
    if (!validated.success) return ack(issuesResponse({ issues: validated.issues, form, view }));
    // Who may answer is judged by the server with the answer (the requester; in a scheduled turn, anyone in the channel).
    const from = await formChannel({ claimed: reference.channel, threadChannel: lookup.step.channel, userId: body.user.id, channelsOf });
    const outcome = await decider.record({ stepId: reference.stepId, approvalId: reference.approvalId, ...(await actorOf({ body, channel: from.channel, membership: organisationMembership, client })), action: { kind: 'answer', answer: validated.value } });
    if (!outcome.recorded) {
      await ackRecorded(() => ack(formErrors({ fields: inputFieldsOf(form), message: from.refusal ?? outcome.message })), { logger, callbackId: REPLY_CALLBACK_ID });
      // Answered first: then whatever the refusal set off (an expiry updating the cards) is seen through.
      return decider.publish(outcome);
    }
    await ackRecorded(ack, { logger, callbackId: REPLY_CALLBACK_ID });
    await decider.publish(outcome);
  });
}
