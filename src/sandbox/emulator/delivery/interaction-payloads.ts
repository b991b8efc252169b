import { API_APP_ID, DEFAULT_TEAM_ID, LEGACY_VERIFICATION_TOKEN } from '../slack-ids.js';

/**
 * Interactivity payloads shaped like Slack's (shared/slack-samples/block_actions.json and
 * view_submission.json): the fields every payload shares, then one builder per payload type.
 */
export interface PayloadWorkspace {
  teamId: string;
  teamDomain: string;
  appId: string;
}

export interface PayloadUser {
  id: string;
  /** The handle; Slack sends it as both `username` and `name`. */
  name: string;
}

export type SlackPayload = Record<string, unknown>;

export const DEFAULT_PAYLOAD_WORKSPACE: PayloadWorkspace = { teamId: DEFAULT_TEAM_ID, teamDomain: 'fake-workspace', appId: API_APP_ID };

function common(options: { workspace: PayloadWorkspace; user: PayloadUser }): SlackPayload {
  const { workspace, user } = options;
  return {
    team: { id: workspace.teamId, domain: workspace.teamDomain },
    user: { id: user.id, username: user.name, name: user.name, team_id: workspace.teamId },
    api_app_id: workspace.appId,
    token: LEGACY_VERIFICATION_TOKEN,
    is_enterprise_install: false,
    enterprise: null,
  };
}

/**
 * A click (or a choice) in a message, an ephemeral or a modal. `container` says which; `message`
 * is absent for ephemerals and modals, `view` present for modals, `response_url` only on messages.
 */
export function blockActionsBody(options: {
  workspace: PayloadWorkspace;
  user: PayloadUser;
  triggerId: string;
  container: SlackPayload;
  channel?: { id: string; name: string };
  message?: SlackPayload;
  view?: SlackPayload;
  responseUrl?: string;
  stateValues?: Record<string, Record<string, unknown>>;
  action: SlackPayload;
}): SlackPayload {
  return {
    type: 'block_actions',
    ...common(options),
    container: options.container,
    trigger_id: options.triggerId,
    ...(options.channel ? { channel: options.channel } : {}),
    ...(options.message ? { message: options.message } : {}),
    ...(options.view ? { view: options.view } : {}),
    state: { values: options.stateValues ?? {} },
    ...(options.responseUrl === undefined ? {} : { response_url: options.responseUrl }),
    actions: [options.action],
  };
}

/** `view` is the whole view as Slack keeps it, with `state.values` holding what was entered. */
export function viewSubmissionBody(options: { workspace: PayloadWorkspace; user: PayloadUser; triggerId: string; view: SlackPayload }): SlackPayload {
  return { type: 'view_submission', ...common(options), trigger_id: options.triggerId, view: options.view, response_urls: [] };
}

/** Sent only for views opened with `notify_on_close: true`. */
export function viewClosedBody(options: { workspace: PayloadWorkspace; user: PayloadUser; view: SlackPayload; isCleared: boolean }): SlackPayload {
  return { type: 'view_closed', ...common(options), view: options.view, is_cleared: options.isCleared };
}

/** A slash command's form fields, as Slack posts them (no JSON payload). */
export function slashCommandFields(options: {
  workspace: PayloadWorkspace;
  user: PayloadUser;
  channel: { id: string; name: string };
  command: string;
  text: string;
  responseUrl: string;
  triggerId: string;
}): Record<string, string> {
  return {
    token: LEGACY_VERIFICATION_TOKEN,
    team_id: options.workspace.teamId,
    team_domain: options.workspace.teamDomain,
    channel_id: options.channel.id,
    channel_name: options.channel.name,
    user_id: options.user.id,
    user_name: options.user.name,
    command: options.command,
    text: options.text,
    api_app_id: options.workspace.appId,
    is_enterprise_install: 'false',
    response_url: options.responseUrl,
    trigger_id: options.triggerId,
  };
}
