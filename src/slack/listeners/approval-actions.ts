import type { App, BlockAction, ButtonAction } from '@slack/bolt';
import { CLICK_STORE_WAIT_MS, type CallDecider } from '../../approvals/decide-call.js';
import type { ThreadMessenger } from '../../conversation/thread-messenger.js';
import { APPROVAL_ACTION_IDS, decodeApprovalActionValue } from '../blocks/action-ids.js';

export interface ApprovalActionOptions {
  decider: CallDecider;
  messenger: ThreadMessenger;
}

/** Where a click came from: the channel to answer in privately, the card's thread, and the card's message. */
export function clickOrigin(body: BlockAction): { channel?: string; threadTs?: string; messageTs?: string } {
  const channel = body.channel?.id ?? body.container?.channel_id;
  const threadTs = body.message?.thread_ts ?? body.container?.thread_ts;
  const messageTs: unknown = body.container?.message_ts ?? body.message?.ts;
  return { ...(channel ? { channel } : {}), ...(typeof threadTs === 'string' ? { threadTs } : {}), ...(typeof messageTs === 'string' ? { messageTs } : {}) };
}

/**
 * Who acted and from where, as Slack's signed payload says: the server compares this with the
 * step, so a click from another workspace or channel cannot decide a call even if it names one.
 */
export function actorOf(body: { user: { id: string; team_id?: string }; team?: { id?: string } | null }, channel: string | undefined, messageTs?: string) {
  return { userId: body.user.id, origin: { teamId: body.team?.id ?? body.user.team_id, channel, ...(messageTs === undefined ? {} : { messageTs }) } };
}

/** Answers only the person who clicked; a failure to do so must not fail the listener. */
export async function tellPrivately(messenger: ThreadMessenger, body: BlockAction, text: string): Promise<void> {
  const { channel, threadTs } = clickOrigin(body);
  if (!channel) return;
  await messenger.postEphemeral({ channel, userId: body.user.id, ...(threadTs ? { threadTs } : {}), text }).catch(() => {});
}

/**
 * Approve and Deny clicks. `ack()` comes first and alone: Slack gives three seconds, and everything
 * after it (store, card update, resuming the turn) may take longer. An Approve names the input
 * version its card showed; the server refuses it if the input changed since.
 */
export function registerApprovalActions(app: App, { decider, messenger }: ApprovalActionOptions): void {
  for (const actionId of [APPROVAL_ACTION_IDS.approve, APPROVAL_ACTION_IDS.deny]) {
    app.action<BlockAction<ButtonAction>>({ type: 'block_actions', action_id: actionId }, async ({ ack, body, action }) => {
      await ack();
      const target = decodeApprovalActionValue(action.value);
      if (!target) return;
      const { channel, messageTs } = clickOrigin(body);
      const outcome = await decider.record(
        {
          stepId: target.stepId,
          approvalId: target.approvalId,
          ...actorOf(body, channel, messageTs),
          action: actionId === APPROVAL_ACTION_IDS.approve ? { kind: 'approve', version: target.version ?? 0 } : { kind: 'deny' },
        },
        { storeWaitMs: CLICK_STORE_WAIT_MS },
      );
      if (outcome.recorded) await decider.publish(outcome);
      else await tellPrivately(messenger, body, outcome.message);
    });
  }
}
