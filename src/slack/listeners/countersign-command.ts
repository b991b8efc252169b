import type { App, BlockAction, ButtonAction, types } from '@slack/bolt';
import type { WebClient } from '@slack/web-api';
import type { Logger } from 'pino';
import { grantAuditEvent, type Grant } from '../../approvals/grant.js';
import { approverGroupIds, type GroupMembers } from '../../approvals/policy/approver-eligibility.js';
import { authorizeApprover } from '../../approvals/policy/authorize-approver.js';
import { appendQuietly, type AuditLog } from '../../audit/audit-log.js';
import type { StateStore } from '../../store/state-store.js';
import { APPROVAL_ACTION_IDS } from '../blocks/action-ids.js';
import { slackDate, userMention } from '../format/mrkdwn-tokens.js';

export interface CountersignCommandOptions {
  store: StateStore;
  audit: AuditLog;
  logger: Logger;
  resolveGroups: (groupIds: readonly string[]) => Promise<GroupMembers>;
  now: () => number;
}

/** Entries per list: an ephemeral message holds 50 blocks. */
const MAX_LISTED = 20;
const HELP = '`/countersign grants` lists the grants in this channel (with Revoke buttons); `/countersign pending` lists approval requests waiting here.';

/**
 * `/countersign grants` and `/countersign pending`, answered privately to whoever asked. Revoking
 * is allowed to the person who granted it and to anyone who could approve the tool.
 */
export function registerCountersignCommand(app: App, { store, audit, logger, resolveGroups, now }: CountersignCommandOptions): void {
  app.command('/countersign', async ({ ack, command, client }) => {
    await ack();
    const where = { teamId: command.team_id, channel: command.channel_id };
    const [subcommand] = command.text.trim().toLowerCase().split(/\s+/);
    const reply = (text: string, blocks?: types.KnownBlock[]) =>
      client.chat.postEphemeral({ channel: command.channel_id, user: command.user_id, text, ...(blocks ? { blocks } : {}) }).catch((error: unknown) => {
        logger.warn({ event: 'command-reply-failed', err: error }, 'could not answer /countersign');
      });
    if (subcommand === 'grants') {
      const grants = await store.listGrants({ ...where, now: now() });
      if (grants.length === 0) return void (await reply('No grants are active in this channel.'));
      return void (await reply(`${grants.length} active grant(s) in this channel`, grants.slice(0, MAX_LISTED).map(grantBlock)));
    }
    if (subcommand === 'pending') {
      const steps = await store.listPendingSteps({ ...where, limit: MAX_LISTED });
      if (steps.length === 0) return void (await reply('No approval requests are waiting in this channel.'));
      const lines = await Promise.all(
        steps.map(async (step) => {
          const tools = [...new Set(step.calls.map((call) => `\`${call.toolName.replace(/[`<>&]/g, '')}\``))].join(', ');
          const link = step.cardTs ? await permalink(client, step.channel, step.cardTs) : undefined;
          return `• ${tools} requested by ${userMention(step.requesterId)} ${slackDate({ epochMilliseconds: step.createdAt })}${link ? ` · <${link}|open the card>` : ''}`;
        }),
      );
      return void (await reply(`${steps.length} approval request(s) waiting`, [{ type: 'section', text: { type: 'mrkdwn', text: lines.join('\n') } }]));
    }
    await reply(HELP);
  });

  app.action<BlockAction<ButtonAction>>({ type: 'block_actions', action_id: APPROVAL_ACTION_IDS.revokeGrant }, async ({ ack, body, action, client }) => {
    await ack();
    const channel = body.channel?.id ?? body.container?.channel_id;
    const teamId = body.team?.id ?? body.user.team_id;
    if (!channel || !teamId || typeof action.value !== 'string') return;
    const answer = (text: string) => client.chat.postEphemeral({ channel, user: body.user.id, text }).catch(() => {});
    const grant = (await store.listGrants({ teamId, channel, now: now() })).find((candidate) => candidate.grantId === action.value);
    if (!grant) return void (await answer('That grant has already expired or been revoked.'));
    if (grant.grantedBy !== body.user.id) {
      const authorization = authorizeApprover({
        evaluation: grant.evaluation,
        userId: body.user.id,
        requesterId: grant.grantedBy,
        groupMembers: await resolveGroups(approverGroupIds(grant.evaluation)),
        approvedBy: [],
      });
      if (!authorization.allowed) {
        const reason = `${authorization.reason.replace(/ approve this$/, ' revoke this grant')}`;
        await appendQuietly(audit, { type: 'action-refused', teamId, grantId: grant.grantId, toolName: grant.toolName, userId: body.user.id, action: 'revoke', code: authorization.code, reason }, logger);
        return void (await answer(`${reason}.`));
      }
    }
    // The grant is found by the click's own workspace and channel, and removed with its audit record in one write.
    const revoked = await store.revokeGrant({ teamId, channel, grantId: grant.grantId, audit: (stored) => grantAuditEvent('grant-revoked', stored, body.user.id) });
    if (!revoked) return void (await answer('That grant has already been revoked.'));
    await answer(`Revoked the grant for \`${revoked.toolName}\`: it will ask for approval again.`);
  });
}

function grantBlock(grant: Grant): types.KnownBlock {
  const scope = grant.scope === 'thread' ? 'one thread' : 'this channel';
  const identical = grant.identicalArgumentsOnly ? ' · identical arguments only' : '';
  return {
    type: 'section',
    text: {
      type: 'mrkdwn',
      text: `\`${grant.toolName.replace(/[`<>&]/g, '')}\` in ${scope} · granted by ${userMention(grant.grantedBy)} · until ${slackDate({ epochMilliseconds: grant.expiresAt })}${identical}`,
    },
    accessory: { type: 'button', action_id: APPROVAL_ACTION_IDS.revokeGrant, text: { type: 'plain_text', text: 'Revoke' }, style: 'danger', value: grant.grantId },
  };
}

async function permalink(client: WebClient, channel: string, ts: string): Promise<string | undefined> {
  try {
    return (await client.chat.getPermalink({ channel, message_ts: ts })).permalink;
  } catch {
    return undefined;
  }
}
