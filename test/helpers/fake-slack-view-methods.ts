import { VIEW_BLOCKS_MAX } from './block-kit-limits.js';
import { invalidBlocksAnswer, isMissing, slackError, type SlackAnswer, type SlackMethodHandler } from './fake-slack-answers.js';
import type { FakeSlackState } from './fake-slack-state.js';

/**
 * views.open / push need a trigger id, and Slack accepts each one once; reusing it is a real
 * production bug (a double click opening two modals), so the fake answers `exchanged_trigger_id`.
 */
const open: SlackMethodHandler = ({ args, state }) => {
  const triggerProblem = consumeTrigger({ args, state });
  if (triggerProblem) return triggerProblem;
  return storeView({ args, state, viewId: state.nextId('V'), previousViewId: null });
};

const push: SlackMethodHandler = open;

/** Unknown view ids are accepted: payload builders invent view ids the fake never opened. */
const update: SlackMethodHandler = ({ args, state }) => {
  if (isMissing(args.view_id) && isMissing(args.external_id)) return slackError('invalid_arguments');
  const viewId = isMissing(args.view_id) ? findViewIdByExternalId({ state, externalId: String(args.external_id) }) : String(args.view_id);
  if (viewId === undefined) return slackError('not_found');
  const stored = state.views.get(viewId);
  if (stored && !isMissing(args.hash) && args.hash !== stored.hash) return slackError('hash_conflict');
  return storeView({ args, state, viewId, previousViewId: stored?.view.previous_view_id ?? null });
};

const publish: SlackMethodHandler = ({ args, state }) => {
  if (isMissing(args.user_id)) return slackError('invalid_arguments');
  return storeView({ args, state, viewId: state.nextId('V'), previousViewId: null });
};

function consumeTrigger(options: { args: Record<string, any>; state: FakeSlackState }): SlackAnswer | undefined {
  const triggerId = options.args.trigger_id;
  if (isMissing(triggerId) && isMissing(options.args.interactivity_pointer)) return slackError('invalid_trigger_id');
  const key = String(triggerId ?? options.args.interactivity_pointer);
  if (options.state.usedTriggerIds.has(key)) return slackError('exchanged_trigger_id');
  options.state.usedTriggerIds.add(key);
  return undefined;
}

function storeView(options: {
  args: Record<string, any>;
  state: FakeSlackState;
  viewId: string;
  previousViewId: string | null;
}): SlackAnswer {
  const { args, state, viewId } = options;
  const submitted: unknown = args.view;
  if (typeof submitted !== 'object' || submitted === null || Array.isArray(submitted)) return slackError('invalid_arguments');
  const invalid = invalidBlocksAnswer({ blocks: (submitted as { blocks?: unknown }).blocks ?? [], maxBlocks: VIEW_BLOCKS_MAX, pointer: '/view/blocks' });
  if (invalid) return invalid;
  const hash = `${Math.floor(Date.now() / 1000)}.${state.nextId('h')}`;
  const view = {
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
    ...(submitted as Record<string, any>),
    hash,
  };
  state.views.set(viewId, { view, hash });
  return { ok: true, view };
}

function findViewIdByExternalId(options: { state: FakeSlackState; externalId: string }): string | undefined {
  for (const [viewId, stored] of options.state.views) {
    if (stored.view.external_id === options.externalId) return viewId;
  }
  return undefined;
}

export const VIEW_METHODS: Record<string, SlackMethodHandler> = {
  'views.open': open,
  'views.push': push,
  'views.update': update,
  'views.publish': publish,
};
