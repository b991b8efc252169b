import type { App, BlockAction, ButtonAction, SlashCommand, types } from '@slack/bolt';
import type { Logger } from 'pino';
import type { GroupMembers } from '../../approvals/policy/approver-eligibility.js';
import { requestsWaitingIn } from '../../approvals/requests-waiting-in.js';
import { appendQuietly, type AuditLog } from '../../audit/audit-log.js';
import type { StateStore } from '../../store/state-store.js';
import { APPROVAL_ACTION_IDS } from '../blocks/action-ids.js';
import { grantBlock } from '../blocks/grant-block.js';
import { SLACK_LIMITS, truncateText } from '../blocks/limits.js';
import { lineSections } from '../blocks/line-sections.js';
import { actorMention, slackDate } from '../format/mrkdwn-tokens.js';
import { createOrganisationMembership, type ActingUser, type OrganisationMembership } from '../organisation-membership.js';
import { permalink } from '../permalink.js';
import { actingUserOf } from './approval-actions.js';
import { membershipRefusal } from './membership-refusal.js';
import { revokeGrantAs } from './revoke-grant.js';

export interface CountersignCommandOptions {
  store: StateStore;
  audit: AuditLog;
  logger: Logger;
  resolveGroups: (groupIds: readonly string[]) => Promise<GroupMembers>;
  /** Whether the person belongs to the workspace's organisation (shared with the other listeners). */
  organisationMembership?: OrganisationMembership;
}

/** Entries per list: an ephemeral message holds 50 blocks. */
const MAX_LISTED = 20;
/** Open requests of the workspace read for their copies in the channel: the newest ones, as App Home reads. */
const OPEN_STEPS_READ = 200;
/** Tool names come from config and MCP servers; cut so a pending line stays one short line. */
const LINE_TOOL_MAX_LENGTH = 60;
const LINE_TOOLS_MAX_LENGTH = 120;
/** Slack's own permalinks are far shorter; a longer one is left out rather than crowd the line. */
const LINK_MAX_LENGTH = 500;
const LIST_FAILED = ':warning: Slack would not show that list just now. Please try again in a minute; the cards in the channel still work.';
/** The lists are only read: a store that failed them changed nothing. */
const READ_FAILED = (what: string) => `:warning: I could not read the ${what} in this channel just now; nothing changed. Please try again in a minute.`;
const REVOKE_FAILED = ':warning: I could not revoke that grant just now, so nothing changed. Please try again in a minute.';
const HELP = '`/countersign grants` lists the grants in this channel (with Revoke buttons); `/countersign pending` lists approval requests waiting here (their thread or a copy of their card).';

/**
 * `/countersign grants` and `/countersign pending`, answered privately to whoever asked, if they
 * belong to the workspace's organisation: in a Slack Connect channel the lists would show a
 * partner's people grant ids and the requests waiting. Revoking is allowed to the person who
 * granted it and to anyone who could approve the tool, members only too.
 */
export function registerCountersignCommand(app: App, options: CountersignCommandOptions): void {
  const { store, audit, logger, resolveGroups } = options;
  const membership = options.organisationMembership ?? createOrganisationMembership({ logger });
  app.command('/countersign', async ({ ack, command, client }) => {
    await ack();
    const where = { teamId: command.team_id, channel: command.channel_id };
    const [subcommand] = command.text.trim().toLowerCase().split(/\s+/);
    const post = (text: string, blocks?: types.KnownBlock[]) =>
      client.chat.postEphemeral({ channel: command.channel_id, user: command.user_id, text, ...(blocks ? { blocks } : {}) });
    // A refused list must not leave the person with nothing, least of all when many requests wait.
    const reply = async (text: string, blocks?: types.KnownBlock[]) => {
      try {
        await post(text, blocks);
      } catch (error) {
        logger.warn({ event: 'command-reply-failed', err: error }, 'could not answer /countersign');
        if (blocks) await post(LIST_FAILED).catch(() => {});
      }
    };
    if (subcommand === 'grants' || subcommand === 'pending') {
      const outsider = membershipRefusal(await membership.of({ client, user: commanderOf(command) }));
      if (outsider) {
        await appendQuietly(audit, { type: 'action-refused', teamId: command.team_id, channel: command.channel_id, userId: command.user_id, action: `list-${subcommand}`, code: outsider.code, reason: outsider.reason }, logger);
        return void (await reply(outsider.reason));
      }
    }
    // The answer was acked empty: a failed read must still tell the person, not only the log.
    const readOrAnswer = async <T>(what: string, read: () => Promise<T>): Promise<T | undefined> => {
      try {
        return await read();
      } catch (error) {
        logger.error({ event: 'command-read-failed', subcommand, err: error }, 'could not read what /countersign lists');
        await reply(READ_FAILED(what));
        return undefined;
      }
    };
    if (subcommand === 'grants') {
      const grants = await readOrAnswer('grants', () => store.listGrants(where));
      if (!grants) return;
      if (grants.length === 0) return void (await reply('No grants are active in this channel.'));
      // Newest first: the grant just given is the one someone wants to take back, and for anyone
      // but its grantor this list is the only Revoke (App Home lists only the viewer's own grants).
      const newestFirst = [...grants].sort((left, right) => right.createdAt - left.createdAt);
      const blocks = newestFirst.slice(0, MAX_LISTED).map((grant) => grantBlock({ grant, actionId: APPROVAL_ACTION_IDS.revokeGrant }));
      const hidden = grants.length - blocks.length;
      // With blocks the text is only the notification: what is left out must be said on screen.
      if (hidden > 0) blocks.push(moreNote(`…and ${hidden} more, older: only the newest ${MAX_LISTED} are listed here`));
      return void (await reply(`${grants.length} active grant(s) in this channel`, blocks));
    }
    if (subcommand === 'pending') {
      // One more than is listed, only to know whether the list is all of them. The copies in this
      // channel (#approvals) are found among the workspace's newest open requests, as App Home finds its own.
      const both = await readOrAnswer('approval requests', () =>
        Promise.all([store.listPendingSteps({ ...where, limit: MAX_LISTED + 1 }), store.listOpenSteps({ teamId: where.teamId, limit: OPEN_STEPS_READ })]),
      );
      if (!both) return;
      const [inThread, open] = both;
      const read = requestsWaitingIn({ channel: where.channel, inThread, open }).slice(0, MAX_LISTED + 1);
      if (read.length === 0) return void (await reply('No approval requests are waiting in this channel.'));
      const listed = read.slice(0, MAX_LISTED);
      const moreThanListed = read.length > MAX_LISTED;
      const lines = await Promise.all(
        listed.map(async ({ step, calls, copy }) => {
          // Under a copy, the copy: the card here, whose buttons count (the thread may be in a channel the reader is not in).
          const link = copy ? (copy.permalink ?? (await permalink(client, copy.channel, copy.ts))) : step.cardTs ? await permalink(client, step.channel, step.cardTs) : undefined;
          const openCard = link && link.length <= LINK_MAX_LENGTH ? ` · <${link}|open the card>` : '';
          return `• ${toolList(calls)} requested by ${actorMention(step.requesterId)} ${slackDate({ epochMilliseconds: step.createdAt })}${openCard}`;
        }),
      );
      if (!moreThanListed) return void (await reply(`${listed.length} approval request(s) waiting`, lineSections({ lines })));
      const blocks = [...lineSections({ lines, maxBlocks: SLACK_LIMITS.blocksPerMessage - 1 }), moreNote(`…and more: only the newest ${MAX_LISTED} are listed here`)];
      return void (await reply(`More than ${MAX_LISTED} approval requests waiting`, blocks));
    }
    await reply(HELP);
  });

  app.action<BlockAction<ButtonAction>>({ type: 'block_actions', action_id: APPROVAL_ACTION_IDS.revokeGrant }, async ({ ack, body, action, client }) => {
    await ack();
    const channel = body.channel?.id ?? body.container?.channel_id;
    const teamId = body.team?.id ?? body.user.team_id;
    if (!channel || !teamId || typeof action.value !== 'string') return;
    const answer = (text: string) => client.chat.postEphemeral({ channel, user: body.user.id, text }).catch(() => {});
    let message: string;
    try {
      // By the store's clock only: this replica's, if fast, would call a grant over that still runs other replicas' calls.
      const grant = (await store.listGrants({ teamId, channel })).find((candidate) => candidate.grantId === action.value);
      if (!grant) return void (await answer('That grant has already expired or been revoked.'));
      // The grant is found by the click's own workspace and channel.
      const clicker = await membership.of({ client, user: actingUserOf(body) });
      // A failed write is answered by revokeGrantAs itself: only what comes before it can fail here.
      message = (await revokeGrantAs({ store, audit, logger, resolveGroups }, { grant, userId: body.user.id, membership: clicker })).message;
    } catch (error) {
      logger.error({ event: 'revoke-failed', userId: body.user.id, err: error }, 'could not revoke a grant from /countersign grants');
      message = REVOKE_FAILED;
    }
    await answer(message);
  });
}

function moreNote(text: string): types.KnownBlock {
  return { type: 'context', elements: [{ type: 'mrkdwn', text }] };
}

/** The step's tool names, each cut, as many as fit one line, then how many more. */
function toolList(calls: readonly { toolName: string }[]): string {
  const names = [...new Set(calls.map((call) => truncateText(call.toolName.replace(/[`<>&\s]+/g, ' ').trim() || 'unnamed tool', LINE_TOOL_MAX_LENGTH)))];
  const shown: string[] = [];
  let length = 0;
  for (const name of names) {
    if (shown.length > 0 && length + name.length > LINE_TOOLS_MAX_LENGTH) break;
    shown.push(`\`${name}\``);
    length += name.length;
  }
  const hidden = names.length - shown.length;
  return shown.join(', ') + (hidden > 0 ? ` and ${hidden} more` : '');
}

/**
 * Whoever typed the command, as its payload says. It names the workspace the command was typed in
 * but not the person's own (a click's `user.team_id`), so the membership asks `users.info`, cached.
 */
function commanderOf(command: SlashCommand): ActingUser {
  return { userId: command.user_id, userTeamId: undefined, teamId: command.team_id, enterpriseId: command.enterprise_id || undefined };
}
