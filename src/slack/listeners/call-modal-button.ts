import type { App, BlockAction, ButtonAction, types } from '@slack/bolt';
import { findCall } from '../../approvals/find-call.js';
import type { PendingCall, PendingStep } from '../../approvals/pending-step.js';
import type { ThreadMessenger } from '../../conversation/thread-messenger.js';
import type { StateStore } from '../../store/state-store.js';
import { decodeApprovalActionValue, encodeApprovalActionValue } from '../blocks/action-ids.js';
import { tellPrivately } from './approval-actions.js';

export interface CallModalContext {
  step: PendingStep;
  call: PendingCall;
  userId: string;
  /** Only the call's ids: the state stays in the store (private_metadata holds 3,000 characters). */
  privateMetadata: string;
}

/**
 * A card button that opens a modal about one call (Edit, Deny with reason, Approve & allow, Reply,
 * View full input). The trigger id lives three seconds and is single use, so after `ack()` only
 * one store read and the view build happen before `views.open`. `view` returns the modal, or a
 * sentence telling the clicker privately why there is none.
 */
export function registerCallModalButton(
  app: App,
  options: {
    actionId: string;
    /** As on the button, for "click … again" when Slack was too slow. */
    buttonLabel: string;
    store: StateStore;
    messenger: ThreadMessenger;
    /** Read-only modals may open for decided calls too. */
    allowClosed?: boolean;
    view: (context: CallModalContext) => types.ModalView | string | Promise<types.ModalView | string>;
  },
): void {
  const { store, messenger } = options;
  app.action<BlockAction<ButtonAction>>({ type: 'block_actions', action_id: options.actionId }, async ({ ack, body, action, client }) => {
    await ack();
    const reference = decodeApprovalActionValue(action.value);
    if (!reference) return;
    const lookup = await findCall(store, reference);
    const { step, call } = lookup;
    if (!step || !call || (!lookup.open && !options.allowClosed)) return tellPrivately(messenger, body, lookup.open ? '' : lookup.message);
    const view = await options.view({ step, call, userId: body.user.id, privateMetadata: encodeApprovalActionValue(reference) });
    if (typeof view === 'string') return tellPrivately(messenger, body, view);
    try {
      await client.views.open({ trigger_id: body.trigger_id, view });
    } catch {
      await tellPrivately(messenger, body, `Slack could not open this in time. Please click *${options.buttonLabel}* again.`);
    }
  });
}
