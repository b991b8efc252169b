import type { App, ViewSubmitAction } from '@slack/bolt';
import type { Logger } from 'pino';
import type { AuditLog } from '../../audit/audit-log.js';
import type { CallDecider } from '../../approvals/decide-call.js';
import type { ThreadMessenger } from '../../conversation/thread-messenger.js';
import type { StateStore } from '../../store/state-store.js';
import { APPROVAL_ACTION_IDS, decodeCallFormMetadata } from '../blocks/action-ids.js';
import type { ChannelsOf } from '../channel-membership.js';
import { DENY_REASON_BLOCK_ID, DENY_REASON_CALLBACK_ID, denyReasonView, submittedDenyReason } from '../views/deny-reason-view.js';
import { createOrganisationMembership, type OrganisationMembership } from '../organisation-membership.js';
import { ackRecorded } from './ack-recorded.js';
import { actorOf } from './approval-actions.js';
import { registerCallModalButton } from './call-modal-button.js';
import { formChannel } from './form-channel.js';
import { isUnreadable, readCall } from './read-call.js';

export interface DenyWithReasonOptions {
  store: StateStore;
  decider: CallDecider;
  messenger: ThreadMessenger;
  logger: Logger;
  /** Where a refused click on the button is recorded. */
  audit: AuditLog;
  organisationMembership?: OrganisationMembership;
  /** Which channels a person is in: a submit claiming the thread's channel counts as made there only for its members (`formChannel`). */
  channelsOf: ChannelsOf;
}

/** "Deny with reason": a small modal whose optional reason reaches the card and the model. */
export function registerDenyWithReason(app: App, { store, decider, messenger, logger, audit, channelsOf, organisationMembership = createOrganisationMembership({ logger }) }: DenyWithReasonOptions): void {
  registerCallModalButton(app, {
    actionId: APPROVAL_ACTION_IDS.denyWithReason,
    buttonLabel: 'Deny with reason',
    store,
    messenger,
    logger,
    organisationMembership,
    refusalAudit: { audit, action: 'deny' },
    decider,
    view: ({ call, privateMetadata }) => denyReasonView({ call, privateMetadata }),
  });

  app.view<ViewSubmitAction>(DENY_REASON_CALLBACK_ID, async ({ ack, body, view, client }) => {
    const reference = decodeCallFormMetadata(view.private_metadata);
    const refuse = (message: string) => ack({ response_action: 'errors', errors: { [DENY_REASON_BLOCK_ID]: message } });
    if (!reference) return refuse('This form is not valid any more.');
    const reason = submittedDenyReason(view.state.values as never);
    // The step's channel, to judge the form's claim to it; a step gone is the decider's to answer.
    const lookup = await readCall({ store, logger, reference });
    if (isUnreadable(lookup)) return refuse(lookup.message);
    const from = await formChannel({ claimed: reference.channel, threadChannel: lookup.step?.channel, userId: body.user.id, channelsOf });
    // Recorded before the ack so a refusal ("already approved by …") can be shown in the form.
    const outcome = await decider.record({
      stepId: reference.stepId,
      approvalId: reference.approvalId,
      ...(await actorOf({ body, channel: from.channel, membership: organisationMembership, client })),
      action: { kind: 'deny', ...(reason ? { reason } : {}) },
    });
    if (!outcome.recorded) {
      await ackRecorded(() => refuse(from.refusal ?? outcome.message), { logger, callbackId: DENY_REASON_CALLBACK_ID });
      // Answered first: then whatever the refusal set off (an expiry updating the cards) is seen through.
      return decider.publish(outcome);
    }
    await ackRecorded(ack, { logger, callbackId: DENY_REASON_CALLBACK_ID });
    // Denied, but Redis's replicas did not confirm it yet: the card alone would say it is done.
    if (outcome.notice) await messenger.postEphemeral({ channel: reference.channel, userId: body.user.id, threadTs: outcome.step.threadTs, text: outcome.notice }).catch(() => {});
    await decider.publish(outcome);
  });
}
