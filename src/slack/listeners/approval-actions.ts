import type { App, BlockAction, ButtonAction } from '@slack/bolt';
import type { CallDecider } from '../../approvals/decide-call.js';
import type { ThreadMessenger } from '../../conversation/thread-messenger.js';
import { APPROVAL_ACTION_IDS, decodeApprovalActionValue } from '../blocks/action-ids.js';

export interface ApprovalActionOptions {
  decider: CallDecider;
  messenger: ThreadMessenger;
}

/** Where a click came from: the channel to answer in privately, and the card's thread. */
export function clickOrigin(body: BlockAction): { channel?: string; threadTs?: string } {
  const channel = body.channel?.id ?? body.container?.channel_id;
  const threadTs = body.message?.thread_ts ?? body.container?.thread_ts;
  return { ...(channel ? { channel } : {}), ...(typeof threadTs === 'string' ? { threadTs } : {}) };
}

/** Answers only the person who clicked; a failure to do so must not fail the listener. */
export async function tellPrivately(messenger: ThreadMessenger, body: BlockAction, text: string): Promise<void> {
  const { channel, threadTs } = clickOrigin(body);
  if (!channel) return;
  await messenger.postEphemeral({ channel, userId: body.user.id, ...(threadTs ? { threadTs } : {}), text }).catch(() => {});
}

/**
 * Approve and Deny clicks. `ack()` comes first and alone: Slack gives three seconds, and everything
 * after it (store, card update, resuming the turn) may take longer.
 */
export function registerApprovalActions(app: App, { decider, messenger }: ApprovalActionOptions): void {
  for (const [actionId, outcome] of [
    [APPROVAL_ACTION_IDS.approve, 'approved'],
    [APPROVAL_ACTION_IDS.deny, 'denied'],
  ] as const) {
    app.action<BlockAction<ButtonAction>>({ type: 'block_actions', action_id: actionId }, async ({ ack, body, action }) => {
      await ack();
      const target = decodeApprovalActionValue(action.value);
      if (!target) return;
      const outcomeOfClick = await decider.record({ ...target, userId: body.user.id, outcome });
      if (outcomeOfClick.recorded) await decider.publish(outcomeOfClick);
      else await tellPrivately(messenger, body, outcomeOfClick.message);
    });
  }
}
