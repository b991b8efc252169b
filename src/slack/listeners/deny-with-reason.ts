import type { App, BlockAction, ButtonAction, ViewSubmitAction } from '@slack/bolt';
import type { CallDecider } from '../../approvals/decide-call.js';
import { findCall } from '../../approvals/find-call.js';
import type { ThreadMessenger } from '../../conversation/thread-messenger.js';
import type { StateStore } from '../../store/state-store.js';
import { APPROVAL_ACTION_IDS, decodeApprovalActionValue, encodeApprovalActionValue } from '../blocks/action-ids.js';
import { DENY_REASON_BLOCK_ID, DENY_REASON_CALLBACK_ID, denyReasonView, submittedDenyReason } from '../views/deny-reason-view.js';
import { tellPrivately } from './approval-actions.js';

export interface DenyWithReasonOptions {
  store: StateStore;
  decider: CallDecider;
  messenger: ThreadMessenger;
}

/** "Deny with reason": a small modal whose optional reason reaches the card and the model. */
export function registerDenyWithReason(app: App, { store, decider, messenger }: DenyWithReasonOptions): void {
  app.action<BlockAction<ButtonAction>>({ type: 'block_actions', action_id: APPROVAL_ACTION_IDS.denyWithReason }, async ({ ack, body, action, client }) => {
    await ack();
    const reference = decodeApprovalActionValue(action.value);
    if (!reference) return;
    const lookup = await findCall(store, reference);
    if (!lookup.open) return tellPrivately(messenger, body, lookup.message);
    try {
      await client.views.open({ trigger_id: body.trigger_id, view: denyReasonView({ call: lookup.call, privateMetadata: encodeApprovalActionValue(reference) }) });
    } catch {
      await tellPrivately(messenger, body, 'Slack could not open the form in time. Please click *Deny with reason* again.');
    }
  });

  app.view<ViewSubmitAction>(DENY_REASON_CALLBACK_ID, async ({ ack, body, view }) => {
    const reference = decodeApprovalActionValue(view.private_metadata);
    if (!reference) return ack({ response_action: 'errors', errors: { [DENY_REASON_BLOCK_ID]: 'This form is not valid any more.' } });
    const reason = submittedDenyReason(view.state.values as never);
    // Recorded before the ack so a refusal ("already approved by …") can be shown in the form.
    const outcome = await decider.record({ ...reference, userId: body.user.id, outcome: 'denied', ...(reason ? { reason } : {}) });
    if (!outcome.recorded) return ack({ response_action: 'errors', errors: { [DENY_REASON_BLOCK_ID]: outcome.message } });
    await ack();
    await decider.publish(outcome);
  });
}
