import { blockActionsBody, DEFAULT_PAYLOAD_WORKSPACE, viewSubmissionBody, type PayloadWorkspace } from '../../src/sandbox/emulator/delivery/interaction-payloads.js';
import { API_APP_ID, DEFAULT_BOT_ID, DEFAULT_BOT_USER_ID, generatedTriggerId, generatedTs, nextSequence } from '../../src/sandbox/emulator/slack-ids.js';

/**
 * Shortcuts over the product's payload builders for tests that click a button or submit a form the
 * emulator never showed: the message, the view and the user's name are made up from the ids.
 */
function workspaceOf(teamId: string | undefined): PayloadWorkspace {
  return teamId === undefined ? DEFAULT_PAYLOAD_WORKSPACE : { ...DEFAULT_PAYLOAD_WORKSPACE, teamId };
}

function userOf(id: string): { id: string; name: string } {
  return { id, name: id.toLowerCase() };
}

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
  const workspace = workspaceOf(options.teamId);
  const blockId = options.blockId ?? `actions:${options.value}`;
  const button = {
    type: 'button',
    action_id: options.actionId,
    text: { type: 'plain_text', text: options.actionId, emoji: true },
    value: options.value,
  };
  const thread = options.threadTs === undefined ? {} : { thread_ts: options.threadTs };
  return blockActionsBody({
    workspace,
    user: userOf(options.user),
    triggerId: options.triggerId ?? generatedTriggerId(),
    container: { type: 'message', message_ts: options.messageTs, channel_id: options.channel, is_ephemeral: false, ...thread },
    channel: { id: options.channel, name: `channel-${options.channel.toLowerCase()}` },
    message: {
      user: DEFAULT_BOT_USER_ID,
      type: 'message',
      ts: options.messageTs,
      bot_id: DEFAULT_BOT_ID,
      app_id: API_APP_ID,
      text: 'Approval needed',
      team: workspace.teamId,
      ...thread,
      blocks: [{ type: 'actions', block_id: blockId, elements: [button] }],
    },
    responseUrl: options.responseUrl ?? `https://hooks.slack.com/actions/${workspace.teamId}/0000000000/fake-response-url`,
    action: { ...button, block_id: blockId, action_ts: generatedTs() },
  });
}

/** A click on a button of the user's published Home view (`view` as views.publish stored it). */
export function homeActionsPayload(options: { user: string; view: Record<string, unknown>; actionId: string; value: string; teamId?: string }): object {
  const button = { type: 'button', action_id: options.actionId, text: { type: 'plain_text', text: options.actionId, emoji: true }, value: options.value };
  return blockActionsBody({
    workspace: workspaceOf(options.teamId),
    user: userOf(options.user),
    triggerId: generatedTriggerId(),
    container: { type: 'view', view_id: options.view.id },
    view: options.view,
    action: { ...button, block_id: `home:${options.value}`, action_ts: generatedTs() },
  });
}

export function viewSubmissionPayload(options: {
  user: string;
  callbackId: string;
  privateMetadata: string;
  values: Record<string, Record<string, any>>;
  teamId?: string;
  viewId?: string;
}): object {
  const workspace = workspaceOf(options.teamId);
  const viewId = options.viewId ?? `V${String(nextSequence()).padStart(9, '0')}`;
  return viewSubmissionBody({
    workspace,
    user: userOf(options.user),
    triggerId: generatedTriggerId(),
    view: {
      id: viewId,
      team_id: workspace.teamId,
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
      app_installed_team_id: workspace.teamId,
      bot_id: DEFAULT_BOT_ID,
    },
  });
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
