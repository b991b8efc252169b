import type { App, BlockAction, ButtonAction } from '@slack/bolt';
import type { WebClient } from '@slack/web-api';
import { CLICK_STORE_WAIT_MS, type CallDecider } from '../../approvals/decide-call.js';
import type { ThreadMessenger } from '../../conversation/thread-messenger.js';
import { APPROVAL_ACTION_IDS, decodeApprovalActionValue } from '../blocks/action-ids.js';
import { createOrganisationMembership, type ActingUser, type OrganisationMembership } from '../organisation-membership.js';

export interface ApprovalActionOptions {
  decider: CallDecider;
  messenger: ThreadMessenger;
  /** Whether a clicker belongs to the workspace's organisation (shared with the other listeners). */
  organisationMembership?: OrganisationMembership;
  /** How long a click waits for an unavailable store; default `CLICK_STORE_WAIT_MS`. */
  storeWaitMs?: number;
}

/** Where a click came from: the channel to answer in privately, the card's thread, and the card's message. */
export function clickOrigin(body: BlockAction): { channel?: string; threadTs?: string; messageTs?: string } {
  const channel = body.channel?.id ?? body.container?.channel_id;
  const threadTs = body.message?.thread_ts ?? body.container?.thread_ts;
  const messageTs: unknown = body.container?.message_ts ?? body.message?.ts;
  return { ...(channel ? { channel } : {}), ...(typeof threadTs === 'string' ? { threadTs } : {}), ...(typeof messageTs === 'string' ? { messageTs } : {}) };
}

/** A click's or form's payload, as far as it says who acted. */
export interface ActorPayload {
  user: { id: string; team_id?: string };
  team?: { id?: string } | null;
  enterprise?: { id?: string } | null;
}

/**
 * The person as Slack's payload names them. `team.id` is the workspace the click came from (in a
 * Slack Connect channel, the one the app is installed in, whoever clicked); `user.team_id` is the
 * clicker's own workspace.
 */
export function actingUserOf(body: ActorPayload): ActingUser {
  return { userId: body.user.id, userTeamId: body.user.team_id, teamId: body.team?.id ?? body.user.team_id, enterpriseId: body.enterprise?.id ?? undefined };
}

/**
 * Who acted and from where, as Slack's signed payload says, and whether they belong to that
 * workspace's organisation: the server compares this with the step, so a click from another
 * workspace or channel, or by a partner organisation's member in a shared channel, cannot decide a
 * call even if it names one.
 */
export async function actorOf(options: { body: ActorPayload; channel: string | undefined; messageTs?: string; membership: OrganisationMembership; client: WebClient }) {
  const { body, channel, messageTs } = options;
  const user = actingUserOf(body);
  const membership = await options.membership.of({ client: options.client, user });
  return { userId: user.userId, origin: { teamId: user.teamId, channel, ...(messageTs === undefined ? {} : { messageTs }), membership } };
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
export function registerApprovalActions(app: App, { decider, messenger, organisationMembership = createOrganisationMembership(), storeWaitMs = CLICK_STORE_WAIT_MS }: ApprovalActionOptions): void {
  for (const actionId of [APPROVAL_ACTION_IDS.approve, APPROVAL_ACTION_IDS.deny]) {
    app.action<BlockAction<ButtonAction>>({ type: 'block_actions', action_id: actionId }, async ({ ack, body, action, client }) => {
      await ack();
      const target = decodeApprovalActionValue(action.value);
      if (!target) return;
      const { channel, messageTs } = clickOrigin(body);
      const outcome = await decider.record(
        {
          stepId: target.stepId,
          approvalId: target.approvalId,
          ...(await actorOf({ body, channel, ...(messageTs === undefined ? {} : { messageTs }), membership: organisationMembership, client })),
          action: actionId === APPROVAL_ACTION_IDS.approve ? { kind: 'approve', version: target.version ?? 0 } : { kind: 'deny' },
        },
        { storeWaitMs },
      );
      if (!outcome.recorded) await tellPrivately(messenger, body, outcome.message);
      // A Deny Redis's replicas did not confirm yet: the card alone would say it is done.
      else if (outcome.notice) await tellPrivately(messenger, body, outcome.notice);
      await decider.publish(outcome);
    });
  }
}
