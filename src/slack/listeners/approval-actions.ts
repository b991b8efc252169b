import type { App, BlockAction, ButtonAction } from '@slack/bolt';
import type { createCallDecider } from '../../approvals/decide-call.js';
import { APPROVAL_ACTION_IDS, decodeApprovalActionValue } from '../blocks/action-ids.js';

export interface ApprovalActionOptions {
  decideCall: ReturnType<typeof createCallDecider>;
}

/**
 * Approve and Deny clicks. `ack()` comes first and alone: Slack gives three seconds, and everything
 * after it (store, card update, resuming the turn) may take longer.
 */
export function registerApprovalActions(app: App, { decideCall }: ApprovalActionOptions): void {
  for (const [actionId, outcome] of [
    [APPROVAL_ACTION_IDS.approve, 'approved'],
    [APPROVAL_ACTION_IDS.deny, 'denied'],
  ] as const) {
    app.action<BlockAction<ButtonAction>>({ type: 'block_actions', action_id: actionId }, async ({ ack, body, action }) => {
      await ack();
      const target = decodeApprovalActionValue(action.value);
      const channel = body.channel?.id ?? body.container?.channel_id;
      if (!target || !channel) return;
      const threadTs = body.message?.thread_ts ?? body.container?.thread_ts;
      await decideCall({
        ...target,
        userId: body.user.id,
        outcome,
        channel,
        ...(typeof threadTs === 'string' ? { threadTs } : {}),
      });
    });
  }
}
