import { isMissing, slackError, type SlackMethodHandler } from './fake-slack-answers.js';

const authTest: SlackMethodHandler = ({ state }) => ({
  ok: true,
  url: 'https://fake-workspace.slack.com/',
  team: 'Fake Workspace',
  user: 'countersign',
  team_id: state.identity.teamId,
  user_id: state.identity.botUserId,
  bot_id: state.identity.botId,
  is_enterprise_install: false,
});

/** Every user exists; names are derived from the id so assertions can predict them. */
const usersInfo: SlackMethodHandler = ({ args, state }) => {
  if (isMissing(args.user)) return slackError('user_not_found');
  const id = String(args.user);
  const name = id.toLowerCase();
  const realName = `User ${id}`;
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
  if (isMissing(args.usergroup)) return slackError('invalid_arguments');
  return { ok: true, users: [...(state.usergroupUsers.get(String(args.usergroup)) ?? [])] };
};

/** Slack refuses the same reaction twice, which retried events run into. */
const reactionsAdd: SlackMethodHandler = ({ args, state }) => {
  if (isMissing(args.channel)) return slackError('channel_not_found');
  if (isMissing(args.name)) return slackError('invalid_name');
  const key = `${args.channel}:${args.timestamp}:${args.name}`;
  if (state.reactions.has(key)) return slackError('already_reacted');
  state.reactions.add(key);
  return { ok: true };
};

const reactionsRemove: SlackMethodHandler = ({ args, state }) => {
  const key = `${args.channel}:${args.timestamp}:${args.name}`;
  if (!state.reactions.delete(key)) return slackError('no_reaction');
  return { ok: true };
};

const assistantThreadUpdate: SlackMethodHandler = ({ args }) => {
  if (isMissing(args.channel_id) || isMissing(args.thread_ts)) return slackError('invalid_arguments');
  return { ok: true };
};

export const WORKSPACE_METHODS: Record<string, SlackMethodHandler> = {
  'auth.test': authTest,
  'users.info': usersInfo,
  'usergroups.users.list': usergroupUsers,
  'reactions.add': reactionsAdd,
  'reactions.remove': reactionsRemove,
  'assistant.threads.setStatus': assistantThreadUpdate,
  'assistant.threads.setSuggestedPrompts': assistantThreadUpdate,
  'assistant.threads.setTitle': assistantThreadUpdate,
};
