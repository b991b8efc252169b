import type { SlackView, StoredView } from '../state/view-stacks.js';
import type { WorkspaceState } from '../state/workspace-state.js';
import { VIEW_BLOCKS_MAX } from './block-kit-limits.js';
import { invalidBlocksAnswer, slackError, stringArgument, type SlackAnswer, type SlackMethodHandler } from './method-answers.js';
import { isPlainObject, type SlackArguments } from './slack-request-arguments.js';

/**
 * views.open / push need a trigger id, and Slack accepts each one once; reusing it is a real
 * production bug (a double click opening two modals), so the emulator answers `exchanged_trigger_id`.
 * The trigger also tells whose screen the modal opens on.
 */
const open: SlackMethodHandler = ({ args, state }) => {
  const trigger = consumeTrigger({ args, state });
  if (!trigger.ok) return slackError(trigger.error);
  return storeView({ args, state, viewId: state.nextId('V'), previousViewId: null, user: trigger.user, place: 'open' });
};

const push: SlackMethodHandler = ({ args, state }) => {
  const trigger = consumeTrigger({ args, state });
  if (!trigger.ok) return slackError(trigger.error);
  const below = trigger.user === undefined ? undefined : state.views.list().findLast((stored) => stored.user === trigger.user);
  return storeView({ args, state, viewId: state.nextId('V'), previousViewId: below?.viewId ?? null, user: trigger.user, place: 'push' });
};

/** Unknown view ids are accepted: payload builders in tests invent view ids the emulator never opened. */
const update: SlackMethodHandler = ({ args, state }) => {
  const givenViewId = stringArgument(args.view_id);
  const externalId = stringArgument(args.external_id);
  if (givenViewId === undefined && externalId === undefined) return slackError('invalid_arguments');
  const viewId = givenViewId ?? state.views.findByExternalId(externalId ?? '');
  if (viewId === undefined) return slackError('not_found');
  const stored = state.views.find(viewId);
  const hash = stringArgument(args.hash);
  if (stored && hash !== undefined && hash !== stored.hash) return slackError('hash_conflict');
  const previousViewId = typeof stored?.view.previous_view_id === 'string' ? stored.view.previous_view_id : null;
  return storeView({ args, state, viewId, previousViewId, user: stored?.user, place: 'replace' });
};

/** A user has one Home view: publishing again replaces it under the same id, as Slack does. */
const publish: SlackMethodHandler = ({ args, state }) => {
  const user = stringArgument(args.user_id);
  if (user === undefined) return slackError('invalid_arguments');
  const current = state.views.list().find((stored) => stored.user === user && stored.view.type === 'home');
  const hash = stringArgument(args.hash);
  if (current && hash !== undefined && hash !== current.hash) return slackError('hash_conflict');
  return storeView({ args, state, viewId: current?.viewId ?? state.nextId('V'), previousViewId: null, user, place: 'replace' });
};

function consumeTrigger(options: { args: SlackArguments; state: WorkspaceState }): { ok: true; user?: string } | { ok: false; error: string } {
  const triggerId = stringArgument(options.args.trigger_id) ?? stringArgument(options.args.interactivity_pointer);
  if (triggerId === undefined) return { ok: false, error: 'invalid_trigger_id' };
  return options.state.handles.consumeTrigger(triggerId);
}

function storeView(options: {
  args: SlackArguments;
  state: WorkspaceState;
  viewId: string;
  previousViewId: string | null;
  user: string | undefined;
  place: 'open' | 'push' | 'replace';
}): SlackAnswer {
  const { state, viewId } = options;
  const completed = completeView({ state, submitted: options.args.view, viewId, previousViewId: options.previousViewId });
  if ('ok' in completed) return completed;
  const stored: StoredView = { ...completed, ...(options.user === undefined ? {} : { user: options.user }) };
  state.views[options.place]({ viewId, stored });
  return { ok: true, view: completed.view };
}

/**
 * The view Slack keeps for one the app sent (by a method or a `response_action`): the app's fields
 * over Slack's defaults, a fresh hash, or Slack's refusal of invalid blocks.
 */
export function completeView(options: {
  state: WorkspaceState;
  submitted: unknown;
  viewId: string;
  previousViewId: string | null;
}): { view: SlackView; hash: string } | (SlackAnswer & { ok: false }) {
  const { state, submitted, viewId } = options;
  if (!isPlainObject(submitted)) return { ...slackError('invalid_arguments') };
  const invalid = invalidBlocksAnswer({ blocks: submitted.blocks ?? [], maxBlocks: VIEW_BLOCKS_MAX, pointer: '/view/blocks' });
  if (invalid) return { ...invalid, ok: false };
  const hash = `${Math.floor(Date.now() / 1000)}.${state.nextId('h')}`;
  const view: SlackView = {
    id: viewId,
    team_id: state.identity.teamId,
    private_metadata: '',
    callback_id: '',
    external_id: '',
    state: { values: {} },
    clear_on_close: false,
    notify_on_close: false,
    previous_view_id: options.previousViewId,
    root_view_id: viewId,
    app_id: state.identity.appId,
    app_installed_team_id: state.identity.teamId,
    bot_id: state.identity.botId,
    ...submitted,
    hash,
  };
  return { view, hash };
}

export const VIEW_METHODS: Record<string, SlackMethodHandler> = {
  'views.open': open,
  'views.push': push,
  'views.update': update,
  'views.publish': publish,
};
