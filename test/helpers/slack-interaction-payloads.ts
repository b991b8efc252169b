import {
  API_APP_ID,
  DEFAULT_BOT_ID,
  DEFAULT_BOT_USER_ID,
  DEFAULT_TEAM_ID,
  LEGACY_VERIFICATION_TOKEN,
  generatedTriggerId,
  generatedTs,
  nextSequence,
} from './slack-fake-ids.js';

/** Interactivity payloads shaped like /work/shared/slack-samples/block_actions.json and view_submission.json. */
export function blockActionsPayload(options: {
  user: string;
  channel: string;
  messageTs: string;
  threadTs?: string;
  actionId: string;
  blockId?: string;
  value: string;
  teamId?: string;
  triggerId?: string;
  /** Where Bolt's respond() posts; point it at a loopback server if a listener uses respond(). */
  responseUrl?: string;
}): object {
  const teamId = options.teamId ?? DEFAULT_TEAM_ID;
  const blockId = options.blockId ?? `actions:${options.value}`;
  const button = {
    type: 'button',
    action_id: options.actionId,
    text: { type: 'plain_text', text: options.actionId, emoji: true },
    value: options.value,
  };
  const thread = options.threadTs === undefined ? {} : { thread_ts: options.threadTs };
  return {
    type: 'block_actions',
    user: { id: options.user, username: options.user.toLowerCase(), name: options.user.toLowerCase(), team_id: teamId },
    api_app_id: API_APP_ID,
    token: LEGACY_VERIFICATION_TOKEN,
    container: { type: 'message', message_ts: options.messageTs, channel_id: options.channel, is_ephemeral: false, ...thread },
    trigger_id: options.triggerId ?? generatedTriggerId(),
    team: { id: teamId, domain: 'fake-workspace' },
    enterprise: null,
    is_enterprise_install: false,
    channel: { id: options.channel, name: `channel-${options.channel.toLowerCase()}` },
    message: {
      user: DEFAULT_BOT_USER_ID,
      type: 'message',
      ts: options.messageTs,
      bot_id: DEFAULT_BOT_ID,
      app_id: API_APP_ID,
      text: 'Approval needed',
      team: teamId,
      ...thread,
      blocks: [{ type: 'actions', block_id: blockId, elements: [button] }],
    },
    state: { values: {} },
    response_url: options.responseUrl ?? `https://hooks.slack.com/actions/${teamId}/0000000000/fake-response-url`,
    actions: [{ ...button, block_id: blockId, action_ts: generatedTs() }],
  };
}

export function viewSubmissionPayload(options: {
  user: string;
  callbackId: string;
  privateMetadata: string;
  values: Record<string, Record<string, any>>;
  teamId?: string;
  viewId?: string;
}): object {
  const teamId = options.teamId ?? DEFAULT_TEAM_ID;
  const viewId = options.viewId ?? `V${String(nextSequence()).padStart(9, '0')}`;
  return {
    type: 'view_submission',
    team: { id: teamId, domain: 'fake-workspace' },
    user: { id: options.user, username: options.user.toLowerCase(), name: options.user.toLowerCase(), team_id: teamId },
    api_app_id: API_APP_ID,
    token: LEGACY_VERIFICATION_TOKEN,
    trigger_id: generatedTriggerId(),
    view: {
      id: viewId,
      team_id: teamId,
      type: 'modal',
      blocks: inputBlocksFor(options.values),
      private_metadata: options.privateMetadata,
      callback_id: options.callbackId,
      state: { values: options.values },
      hash: `${Math.floor(Date.now() / 1000)}.fake${nextSequence()}`,
      title: { type: 'plain_text', text: 'Edit tool call', emoji: true },
      clear_on_close: false,
      notify_on_close: false,
      close: { type: 'plain_text', text: 'Cancel', emoji: true },
      submit: { type: 'plain_text', text: 'Submit', emoji: true },
      previous_view_id: null,
      root_view_id: viewId,
      app_id: API_APP_ID,
      external_id: '',
      app_installed_team_id: teamId,
      bot_id: DEFAULT_BOT_ID,
    },
    response_urls: [],
    is_enterprise_install: false,
    enterprise: null,
  };
}

/** The echoed blocks: one input block per submitted block id, element type taken from the state. */
function inputBlocksFor(values: Record<string, Record<string, any>>): object[] {
  return Object.entries(values).flatMap(([blockId, actions]) =>
    Object.entries(actions).map(([actionId, state]) => ({
      type: 'input',
      block_id: blockId,
      label: { type: 'plain_text', text: blockId, emoji: true },
      optional: true,
      dispatch_action: false,
      element: { type: typeof state?.type === 'string' ? state.type : 'plain_text_input', action_id: actionId },
    })),
  );
}
