import {
  API_APP_ID,
  DEFAULT_BOT_USER_ID,
  DEFAULT_TEAM_ID,
  LEGACY_VERIFICATION_TOKEN,
  generatedEventId,
  generatedTs,
  nextSequence,
} from '../slack-ids.js';

/** Events API envelopes shaped like shared/slack-samples/app_mention_event_callback.json. */
export function appMentionEnvelope(options: {
  eventId?: string;
  user: string;
  text: string;
  channel: string;
  ts?: string;
  threadTs?: string;
  teamId?: string;
  botUserId?: string;
}): object {
  return eventCallback({
    ...options,
    event: ({ teamId, ts }) => ({
      user: options.user,
      type: 'app_mention',
      ts,
      client_msg_id: clientMessageId(),
      text: options.text,
      team: teamId,
      ...(options.threadTs === undefined ? {} : { thread_ts: options.threadTs, parent_user_id: options.user }),
      blocks: richTextBlocks(options.text),
      channel: options.channel,
      event_ts: ts,
    }),
  });
}

export function messageEnvelope(options: {
  eventId?: string;
  user?: string;
  botId?: string;
  text: string;
  channel: string;
  channelType?: 'channel' | 'group' | 'im';
  ts?: string;
  threadTs?: string;
  teamId?: string;
  subtype?: string;
  botUserId?: string;
}): object {
  return eventCallback({
    ...options,
    event: ({ teamId, ts }) => ({
      type: 'message',
      ...(options.subtype === undefined ? {} : { subtype: options.subtype }),
      ...(options.user === undefined ? {} : { user: options.user }),
      ...(options.botId === undefined ? { client_msg_id: clientMessageId() } : { bot_id: options.botId, app_id: API_APP_ID }),
      text: options.text,
      ts,
      team: teamId,
      ...(options.threadTs === undefined ? {} : { thread_ts: options.threadTs }),
      blocks: richTextBlocks(options.text),
      channel: options.channel,
      event_ts: ts,
      channel_type: options.channelType ?? channelTypeOf(options.channel),
    }),
  });
}

/** A person opened the app's Home tab (`tab: 'messages'` for its Messages tab). */
export function appHomeOpenedEnvelope(options: { user: string; teamId?: string; eventId?: string; botUserId?: string; tab?: 'home' | 'messages' }): object {
  const channel = `D${options.user.slice(1)}`;
  return eventCallback({
    ...options,
    channel,
    event: ({ ts }) => ({ type: 'app_home_opened', user: options.user, channel, tab: options.tab ?? 'home', event_ts: ts }),
  });
}

/** The envelope around an event; `event` is built once the team and the message ts are settled. */
function eventCallback(options: {
  teamId?: string;
  eventId?: string;
  botUserId?: string;
  channel: string;
  ts?: string;
  event: (settled: { teamId: string; ts: string }) => Record<string, unknown>;
}): object {
  const teamId = options.teamId ?? DEFAULT_TEAM_ID;
  const ts = options.ts ?? generatedTs();
  return {
    token: LEGACY_VERIFICATION_TOKEN,
    team_id: teamId,
    context_team_id: teamId,
    context_enterprise_id: null,
    api_app_id: API_APP_ID,
    event: options.event({ teamId, ts }),
    type: 'event_callback',
    event_id: options.eventId ?? generatedEventId(),
    event_time: Math.floor(Number(ts)),
    authorizations: [{ enterprise_id: null, team_id: teamId, user_id: options.botUserId ?? DEFAULT_BOT_USER_ID, is_bot: true, is_enterprise_install: false }],
    is_ext_shared_channel: false,
    event_context: `4-fake-${options.channel}`,
  };
}

/** Slack's rich_text rendering of the text: `<@U…>` mentions become user elements. */
function richTextBlocks(text: string): object[] {
  const elements = text
    .split(/(<@[A-Z0-9]+>)/)
    .filter((part) => part !== '')
    .map((part) => {
      const mention = /^<@([A-Z0-9]+)>$/.exec(part);
      return mention ? { type: 'user', user_id: mention[1] } : { type: 'text', text: part };
    });
  return [{ type: 'rich_text', block_id: `rt${nextSequence()}`, elements: [{ type: 'rich_text_section', elements }] }];
}

function channelTypeOf(channel: string): 'channel' | 'group' | 'im' {
  if (channel.startsWith('D')) return 'im';
  if (channel.startsWith('G')) return 'group';
  return 'channel';
}

function clientMessageId(): string {
  return `00000000-0000-4000-8000-${String(nextSequence()).padStart(12, '0')}`;
}
