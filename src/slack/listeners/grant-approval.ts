import type { App, ViewSubmitAction } from '@slack/bolt';
import type { Logger } from 'pino';
import type { AuditLog } from '../../audit/audit-log.js';
import type { CallDecider } from '../../approvals/decide-call.js';
import type { ThreadMessenger } from '../../conversation/thread-messenger.js';
import type { StateStore } from '../../store/state-store.js';
import { APPROVAL_ACTION_IDS, decodeCallFormMetadata } from '../blocks/action-ids.js';
import type { ChannelsOf } from '../channel-membership.js';
import { GRANT_CALLBACK_ID, grantView, submittedGrantChoice } from '../views/grant-view.js';
import { createOrganisationMembership, type OrganisationMembership } from '../organisation-membership.js';
import { ackRecorded } from './ack-recorded.js';
import { actorOf } from './approval-actions.js';
import { callAsShown, registerCallModalButton } from './call-modal-button.js';
import { formChannel } from './form-channel.js';
import { isUnreadable, readCall } from './read-call.js';

export interface GrantApprovalOptions {
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

/**
 * "Approve & allow…": approves the call and records a bounded, revocable grant for later matching
 * calls, in one atomic write. Whether a grant is allowed at all (one approver, grants not
 * forbidden, the clicker may approve) is decided on the server when the form is submitted, from
 * the stored step: a forged click that reaches this form for a quorum call records nothing. The form
 * shows the input it approves and opens only from a card showing the current input; its submit
 * approves the version that card showed, or nothing.
 */
export function registerGrantApproval(app: App, { store, decider, messenger, logger, audit, channelsOf, organisationMembership = createOrganisationMembership({ logger }) }: GrantApprovalOptions): void {
  registerCallModalButton(app, {
    actionId: APPROVAL_ACTION_IDS.grant,
    buttonLabel: 'Approve & allow…',
    store,
    messenger,
    logger,
    organisationMembership,
    refusalAudit: { audit, action: 'grant' },
    decider,
    onlyForCurrentInput: true,
    view: ({ step, call, privateMetadata }) => {
      if (call.policy?.grants === 'forbidden') return 'The policy does not allow grants for this tool.';
      if ((call.policy?.required ?? 1) > 1) return 'This call needs several approvers, so later calls cannot be allowed ahead of time.';
      return grantView({ step, call, privateMetadata });
    },
  });

  app.view<ViewSubmitAction>(GRANT_CALLBACK_ID, async ({ ack, body, view, client }) => {
    const reference = decodeCallFormMetadata(view.private_metadata);
    const lookup = reference ? await readCall({ store, logger, reference }) : undefined;
    const refuse = (message: string) => ack({ response_action: 'errors', errors: { scope: message } });
    if (isUnreadable(lookup)) return refuse(lookup.message);
    if (!reference || !lookup?.call) return refuse('This approval request is no longer open.');
    const choice = submittedGrantChoice(view.state.values as never, callAsShown(lookup.call));
    if (!choice) return refuse('Choose where and for how long.');
    const from = await formChannel({ claimed: reference.channel, threadChannel: lookup.step?.channel, userId: body.user.id, channelsOf });
    const outcome = await decider.record({
      stepId: reference.stepId,
      approvalId: reference.approvalId,
      ...(await actorOf({ body, channel: from.channel, membership: organisationMembership, client })),
      action: { kind: 'approve', version: reference.version ?? 0, grant: choice },
    });
    if (!outcome.recorded) {
      await ackRecorded(() => refuse(from.refusal ?? outcome.message), { logger, callbackId: GRANT_CALLBACK_ID });
      // Answered first: then whatever the refusal set off (an expiry updating the cards) is seen through.
      return decider.publish(outcome);
    }
    await ackRecorded(ack, { logger, callbackId: GRANT_CALLBACK_ID });
    await decider.publish(outcome);
  });
}
