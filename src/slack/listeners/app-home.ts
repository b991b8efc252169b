import type { App, BlockAction, ButtonAction } from '@slack/bolt';
import type { WebClient } from '@slack/web-api';
import type { Logger } from 'pino';
import { COUNTERSIGN_ACTOR } from '../../agent/decision-messages.js';
import type { CallDecider, RecordOutcome } from '../../approvals/decide-call.js';
import type { Grant } from '../../approvals/grant.js';
import type { PendingStep } from '../../approvals/pending-step.js';
import type { CurrentEvaluation } from '../../approvals/policy/governing-policy.js';
import { type Membership, UNAPPROVABLE_TEXT } from '../../approvals/transitions/call-action.js';
import { appendQuietly, type AuditLog } from '../../audit/audit-log.js';
import type { StateStore } from '../../store/state-store.js';
import { decodeApprovalActionValue, HOME_ACTION_IDS } from '../blocks/action-ids.js';
import { buildHomeView, buildUnreadHomeView } from '../blocks/home-view.js';
import { escapeMrkdwn } from '../format/escape-mrkdwn.js';
import { CHANNELS_UNKNOWN_TEXT, type ChannelsOf, NOT_A_MEMBER_TEXT } from '../channel-membership.js';
import { readHomeContent } from '../home-content.js';
import { permalink } from '../permalink.js';
import { createOrganisationMembership, type OrganisationMembership } from '../organisation-membership.js';
import type { ResolveGroups } from '../usergroup-members.js';
import { fullInputView } from '../views/full-input-view.js';
import { actingUserOf, actorOf } from './approval-actions.js';
import { callAsShown } from './call-modal-button.js';
import { membershipRefusal } from './membership-refusal.js';
import { readCall, UNREADABLE_CALL_TEXT } from './read-call.js';
import { revokeGrantAs } from './revoke-grant.js';

export interface AppHomeOptions {
  store: StateStore;
  audit: AuditLog;
  decider: CallDecider;
  resolveGroups: ResolveGroups;
  channelsOf: ChannelsOf;
  /** The config in force, which judges a click with the card's policy: "Waiting for you" lists by both. */
  currentEvaluation: CurrentEvaluation;
  logger: Logger;
  now: () => number;
  organisationMembership?: OrganisationMembership;
}

const MAX_CACHED_PERMALINKS = 5_000;

/**
 * The App Home tab ("Waiting for you", your requests, your recent decisions, your grants), and its
 * buttons. A Home click names no channel, so the listener stands in for what a card click proves
 * by being delivered: that the person is in the request's channel (`channelsOf`). Everything else
 * (workspace, expiry, version, policy, quorum) is judged by the same decider as a card click, and
 * the card in the thread is updated the same way. The answer to a click is the Home view published
 * again with a notice on top: Home has no ephemeral messages, and the fresh view also shows what
 * changed (a stale version's new input, a call someone else decided).
 */
export function registerAppHome(app: App, options: AppHomeOptions): void {
  const { logger } = options;
  const membership = options.organisationMembership ?? createOrganisationMembership({ logger });
  // A message's permalink never changes; Home views are published often, so each is asked for once.
  const permalinks = new Map<string, string>();
  const linkTo = (client: WebClient) => async (channel: string, ts: string) => {
    const key = `${channel}:${ts}`;
    const known = permalinks.get(key);
    if (known) return known;
    const link = await permalink(client, channel, ts);
    if (link) {
      if (permalinks.size >= MAX_CACHED_PERMALINKS) permalinks.clear();
      permalinks.set(key, link);
    }
    return link;
  };

  async function publish({ client, teamId, userId, notice }: { client: WebClient; teamId: string; userId: string; notice?: string }): Promise<void> {
    try {
      const content = await readHomeContent(options, { linkTo: linkTo(client), teamId, userId, ...(notice ? { notice } : {}) });
      await client.views.publish({ user_id: userId, view: buildHomeView(content) });
    } catch (error) {
      logger.warn({ event: 'home-publish-failed', userId, err: error }, 'could not publish the App Home view');
      // A click's outcome (recorded or not) is shown only here: without the lists, but shown.
      if (notice) await publishNoticeOnly({ client, userId, notice });
    }
  }

  async function publishNoticeOnly({ client, userId, notice }: { client: WebClient; userId: string; notice: string }): Promise<void> {
    try {
      await client.views.publish({ user_id: userId, view: buildUnreadHomeView({ notice, now: options.now() }) });
    } catch (error) {
      logger.error({ event: 'home-notice-lost', userId, err: error }, 'could not show the outcome of an App Home click');
    }
  }

  app.event('app_home_opened', async ({ event, body, context, client }) => {
    if (event.tab !== 'home') return;
    const teamId = context.teamId ?? body.team_id;
    if (!teamId) return;
    await publish({ client, teamId, userId: event.user });
  });

  for (const actionId of [HOME_ACTION_IDS.approve, HOME_ACTION_IDS.deny]) {
    app.action<BlockAction<ButtonAction>>({ type: 'block_actions', action_id: actionId }, async ({ ack, body, action, client }) => {
      await ack();
      const teamId = body.team?.id ?? body.user.team_id;
      const target = decodeApprovalActionValue(action.value);
      if (!teamId || !target) return;
      // Unreadable is treated as gone: the decider then reads again and answers "could not record".
      const step = await options.store.getStep(target.stepId).catch(() => undefined);
      const memberOf = step ? await options.channelsOf(body.user.id) : undefined;
      const member = step !== undefined && memberOf?.has(step.channel) === true;
      // Outside the channel the click is still judged (and refused, and audited) as one from elsewhere.
      const outcome = await options.decider.record({
        stepId: target.stepId,
        approvalId: target.approvalId,
        ...(await actorOf({ body, channel: member ? step.channel : undefined, membership, client })),
        action: actionId === HOME_ACTION_IDS.approve ? { kind: 'approve', version: target.version ?? 0 } : { kind: 'deny' },
      });
      const notice = outcome.recorded ? recordedNotice(outcome) : member || !step ? outcome.message : memberOf ? NOT_A_MEMBER_TEXT : CHANNELS_UNKNOWN_TEXT;
      // Side by side: in a process that also runs turns, the decider's publish lasts as long as the resumed turn.
      await Promise.all([options.decider.publish(outcome), publish({ client, teamId, userId: body.user.id, notice })]);
    });
  }

  app.action<BlockAction<ButtonAction>>({ type: 'block_actions', action_id: HOME_ACTION_IDS.revokeGrant }, async ({ ack, body, action, client }) => {
    await ack();
    const teamId = body.team?.id ?? body.user.team_id;
    if (!teamId || typeof action.value !== 'string') return;
    const userId = body.user.id;
    let notice: string;
    try {
      // By the store's clock only, as `/countersign grants` Revoke (`listTeamGrants`).
      const grant = (await options.store.listTeamGrants({ teamId })).find((candidate) => candidate.grantId === action.value);
      if (!grant) notice = 'That grant has already expired or been revoked.';
      else {
        const clicker = await membership.of({ client, user: actingUserOf(body) });
        // Someone outside the organisation is refused as that (by revokeGrantAs), whatever channels they are in.
        notice = (clicker === 'member' ? await outsideGrantChannel(grant, userId) : undefined) ?? (await revokeGrantAs(options, { grant, userId, membership: clicker })).message;
      }
    } catch (error) {
      logger.error({ event: 'revoke-failed', userId, err: error }, 'could not revoke a grant from App Home');
      notice = ':warning: I could not revoke that grant just now, so nothing changed. Please try again.';
    }
    await publish({ client, teamId, userId, notice });
  });

  /**
   * Someone else's grant is revoked as from its channel (`/countersign grants`), so only by someone
   * in it. A refusal is audited like those `revokeGrantAs` makes; returns what to tell the person.
   */
  async function outsideGrantChannel(grant: Grant, userId: string): Promise<string | undefined> {
    if (grant.grantedBy === userId) return undefined;
    const memberOf = await options.channelsOf(userId);
    if (memberOf?.has(grant.channel)) return undefined;
    const [code, reason] = memberOf ? ['wrong-channel', NOT_A_MEMBER_TEXT] : ['channels-unknown', CHANNELS_UNKNOWN_TEXT];
    await appendQuietly(options.audit, { type: 'action-refused', teamId: grant.teamId, channel: grant.channel, grantId: grant.grantId, toolName: grant.toolName, userId, action: 'revoke', code, reason }, logger);
    return reason;
  }

  // The card's View full input judges a click by the channel it came from, which a Home click lacks.
  app.action<BlockAction<ButtonAction>>({ type: 'block_actions', action_id: HOME_ACTION_IDS.viewInput }, async ({ ack, body, action, client }) => {
    await ack();
    const teamId = body.team?.id ?? body.user.team_id;
    const target = decodeApprovalActionValue(action.value);
    if (!teamId || !target) return;
    const userId = body.user.id;
    // The trigger id lives three seconds: one store read, and the two lookups Home's view just cached.
    const lookup = await readCall({ store: options.store, logger, reference: target });
    const { step, call } = lookup;
    if (!step || !call) return publish({ client, teamId, userId, notice: 'message' in lookup ? lookup.message : UNREADABLE_CALL_TEXT });
    const [clicker, memberOf] = await Promise.all([membership.of({ client, user: actingUserOf(body) }), options.channelsOf(userId)]);
    const refusal = readRefusal({ step, teamId, clicker, memberOf });
    if (refusal) return publish({ client, teamId, userId, notice: refusal });
    try {
      await client.views.open({ trigger_id: body.trigger_id, view: fullInputView({ call: callAsShown(call) }) });
    } catch {
      await publish({ client, teamId, userId, notice: 'Slack could not open this in time. Please click *View full input* again.' });
    }
  });

  // A link button still sends a click; acknowledging it keeps Slack from showing an error.
  app.action({ type: 'block_actions', action_id: HOME_ACTION_IDS.openCard }, async ({ ack }) => {
    await ack();
  });
}

/**
 * Why the clicker may not read a call's input from Home, or undefined: only whoever could read the
 * card itself may, so someone of this workspace's organisation who is in the request's channel.
 */
function readRefusal({ step, teamId, clicker, memberOf }: { step: PendingStep; teamId: string; clicker: Membership; memberOf: ReadonlySet<string> | undefined }): string | undefined {
  if (step.teamId !== teamId) return 'This request belongs to another workspace, so nothing changed.';
  const outsider = membershipRefusal(clicker);
  if (outsider) return outsider.reason;
  if (!memberOf) return CHANNELS_UNKNOWN_TEXT;
  return memberOf.has(step.channel) ? undefined : NOT_A_MEMBER_TEXT;
}

const UNAPPROVABLE_NOTICE =
  ':warning: This request can no longer be approved: the approval policy changed since it was posted and nobody it names can approve it now, so it was closed and will not run.';

function recordedNotice(outcome: Extract<RecordOutcome, { recorded: true }>): string {
  if (outcome.notice) return outcome.notice;
  const { effect } = outcome;
  if (effect.kind === 'counted') return `:hourglass_flowing_sand: Your approval counts (${effect.have} of ${effect.need}); it runs once enough people approve.`;
  if (effect.kind === 'decided' && effect.decision.outcome === 'approved') return ':white_check_mark: Approved. The card in the thread shows it, and the request continues there.';
  // Closed by countersign, not by the clicker: worded as their own Deny, an Approve would read as a denial.
  if (effect.kind === 'decided' && effect.decision.userId === COUNTERSIGN_ACTOR) return closedNotice(effect.decision.reason);
  return ':x: Denied. The card in the thread shows it.';
}

function closedNotice(reason: string | undefined): string {
  if (reason === UNAPPROVABLE_TEXT) return UNAPPROVABLE_NOTICE;
  const why = reason ? `: ${escapeMrkdwn(reason)}` : '';
  return `:warning: This request was closed by countersign and will not run${why}. The card in the thread shows it.`;
}
