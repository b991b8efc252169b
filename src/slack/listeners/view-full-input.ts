import type { App, BlockAction, ButtonAction } from '@slack/bolt';
import type { ThreadMessenger } from '../../conversation/thread-messenger.js';
import type { StateStore } from '../../store/state-store.js';
import { APPROVAL_ACTION_IDS, decodeApprovalActionValue } from '../blocks/action-ids.js';
import { fullInputView } from '../views/full-input-view.js';
import { tellPrivately } from './approval-actions.js';

/** "View full input": the card cut the arguments; this shows all of them, read-only. */
export function registerViewFullInput(app: App, { store, messenger }: { store: StateStore; messenger: ThreadMessenger }): void {
  app.action<BlockAction<ButtonAction>>({ type: 'block_actions', action_id: APPROVAL_ACTION_IDS.viewInput }, async ({ ack, body, action, client }) => {
    await ack();
    const reference = decodeApprovalActionValue(action.value);
    if (!reference) return;
    const step = await store.getStep(reference.stepId);
    const call = step?.calls.find((candidate) => candidate.approvalId === reference.approvalId);
    if (!call) return tellPrivately(messenger, body, 'This approval request is no longer available.');
    try {
      await client.views.open({ trigger_id: body.trigger_id, view: fullInputView({ call }) });
    } catch {
      await tellPrivately(messenger, body, 'Slack could not open the input in time. Please click *View full input* again.');
    }
  });
}
