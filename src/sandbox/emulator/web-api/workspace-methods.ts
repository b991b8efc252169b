import { isMissing, slackError, stringArgument, type SlackMethodHandler } from './method-answers.js';

const authTest: SlackMethodHandler = ({ state }) => ({
  ok: true,
  url: state.profile.url,
  team: state.profile.teamName,
  user: state.profile.botName,
  team_id: state.identity.teamId,
  user_id: state.identity.botUserId,
  bot_id: state.identity.botId,
  is_enterprise_install: false,
});

/** Every user exists; people the workspace does not list get names derived from the id, so assertions can predict them. */
const usersInfo: SlackMethodHandler = ({ args, state }) => {
  const id = stringArgument(args.user);
  if (id === undefined) return slackError('user_not_found');
  const known = state.users.get(id);
  const name = known?.name ?? id.toLowerCase();
  const realName = known?.realName ?? `User ${id}`;
  return {
    ok: true,
    user: {
      id,
      team_id: state.identity.teamId,
      name,
      real_name: realName,
      deleted: false,
      is_bot: id === state.identity.botUserId,
      profile: { real_name: realName, display_name: name },
    },
  };
};

const usergroupUsers: SlackMethodHandler = ({ args, state }) => {
  const usergroup = stringArgument(args.usergroup);
  if (usergroup === undefined) return slackError('invalid_arguments');
  return { ok: true, users: [...(state.usergroupUsers.get(usergroup) ?? [])] };
};

/**
 * Everyone is in every channel the workspace knows (named ones and those with messages), unless
 * `channelMembers` lists a channel's members.
 */
const usersConversations: SlackMethodHandler = ({ args, state }) => {
  const user = stringArgument(args.user);
  if (user === undefined) return slackError('invalid_arguments');
  const known = new Set([...state.channels.keys(), ...state.messages.all().map((message) => message.channel)]);
  const channels = [...known].filter((channel) => state.channelMembers.get(channel)?.has(user) ?? true);
  return { ok: true, channels: channels.map((id) => ({ id, name: state.channels.get(id) ?? `channel-${id.toLowerCase()}` })), response_metadata: { next_cursor: '' } };
};

/** Slack refuses the same reaction twice, which retried events run into. */
const reactionsAdd: SlackMethodHandler = ({ args, state }) => {
  if (isMissing(args.channel)) return slackError('channel_not_found');
  if (isMissing(args.name)) return slackError('invalid_name');
  const key = `${String(args.channel)}:${String(args.timestamp)}:${String(args.name)}`;
  if (state.reactions.has(key)) return slackError('already_reacted');
  state.reactions.add(key);
  return { ok: true };
};

const reactionsRemove: SlackMethodHandler = ({ args, state }) => {
  const key = `${String(args.channel)}:${String(args.timestamp)}:${String(args.name)}`;
  if (!state.reactions.delete(key)) return slackError('no_reaction');
  return { ok: true };
};

const setStatus: SlackMethodHandler = ({ args, state }) => {
  const channel = stringArgument(args.channel_id);
  const threadTs = stringArgument(args.thread_ts);
  if (channel === undefined || threadTs === undefined) return slackError('invalid_arguments');
  state.setStatus({ channel, threadTs, status: typeof args.status === 'string' ? args.status : '' });
  return { ok: true };
};

const assistantThreadUpdate: SlackMethodHandler = ({ args }) => {
  if (isMissing(args.channel_id) || isMissing(args.thread_ts)) return slackError('invalid_arguments');
  return { ok: true };
};

/** The bot's DM with one user: the same channel id every time, derived from the user id. */
const conversationsOpen: SlackMethodHandler = ({ args }) => {
  const users = stringArgument(args.users)?.split(',').filter(Boolean) ?? [];
  if (users.length !== 1) return slackError(users.length === 0 ? 'users_list_not_supplied' : 'not_supported');
  return { ok: true, channel: { id: directMessageChannel(users[0]!) } };
};

/** `D` + the user id without its `U`/`W`: what the emulator calls a user's DM with the bot. */
export function directMessageChannel(userId: string): string {
  return `D${userId.slice(1)}`;
}

export const WORKSPACE_METHODS: Record<string, SlackMethodHandler> = {
  'auth.test': authTest,
  'users.info': usersInfo,
  'usergroups.users.list': usergroupUsers,
  'users.conversations': usersConversations,
  'conversations.open': conversationsOpen,
  'reactions.add': reactionsAdd,
  'reactions.remove': reactionsRemove,
  'assistant.threads.setStatus': setStatus,
  'assistant.threads.setSuggestedPrompts': assistantThreadUpdate,
  'assistant.threads.setTitle': assistantThreadUpdate,
};
