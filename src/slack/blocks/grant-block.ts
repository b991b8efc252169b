import type { types } from '@slack/bolt';
import type { Grant } from '../../approvals/grant.js';
import { channelMention, slackDate, userMention } from '../format/mrkdwn-tokens.js';

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
      text: `\`${grant.toolName.replace(/[`<>&]/g, '')}\` in ${scope} · granted by ${userMention(grant.grantedBy)} · until ${slackDate({ epochMilliseconds: grant.expiresAt })}${identical}`,
    },
    accessory: { type: 'button', action_id: actionId, text: { type: 'plain_text', text: 'Revoke' }, style: 'danger', value: grant.grantId },
  };
}
