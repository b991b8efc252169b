import type { types } from '@slack/bolt';
import type { Grant } from '../../approvals/grant.js';
import { channelMention, slackDate, userMention } from '../format/mrkdwn-tokens.js';
import { truncateText } from './limits.js';

/** Tool names come from config and MCP servers: long ones are cut so ten grants fit a list. */
const TOOL_NAME_MAX_LENGTH = 100;

/**
 * One grant with a Revoke button, as `/countersign grants` (in its channel) and App Home (across
 * channels, so it names the channel) list it.
 */
export function grantBlock({ grant, actionId, showChannel = false }: { grant: Grant; actionId: string; showChannel?: boolean }): types.KnownBlock {
  const place = showChannel ? channelMention(grant.channel) : 'this channel';
  const scope = grant.scope === 'thread' ? `one thread${showChannel ? ` in ${place}` : ''}` : place;
  const identical = grant.identicalArgumentsOnly ? ' · identical arguments only' : '';
  return {
    type: 'section',
    text: {
      type: 'mrkdwn',
      text: `\`${truncateText(grant.toolName.replace(/[`<>&\s]+/g, ' ').trim(), TOOL_NAME_MAX_LENGTH)}\` in ${scope} · granted by ${userMention(grant.grantedBy)} · until ${slackDate({ epochMilliseconds: grant.expiresAt })}${identical}`,
    },
    accessory: { type: 'button', action_id: actionId, text: { type: 'plain_text', text: 'Revoke' }, style: 'danger', value: grant.grantId },
  };
}
