import type { ViewSubmitRequest, ViewSubmitResponse } from '../../sandbox-api.js';
import type { StoredView } from '../state/view-stacks.js';
import type { WorkspaceState } from '../state/workspace-state.js';
import { isPlainObject } from '../web-api/slack-request-arguments.js';
import { completeView } from '../web-api/view-methods.js';
import { DeliveryRefused } from './bot-receiver.js';
import { payloadUser, payloadWorkspace, type DeliveryContext } from './delivery-context.js';
import { viewClosedBody, viewSubmissionBody } from './interaction-payloads.js';

/**
 * A modal's Submit, delivered as Slack's `view_submission` (the view as Slack keeps it, with the
 * entered `state.values`), and the bot's answer applied the way Slack applies it: no
 * `response_action` closes the view, `errors` keeps it open with messages under the fields,
 * `update` replaces it, `push` stacks a new one on it, `clear` closes the whole stack.
 */
export async function deliverViewSubmission({ context, request }: { context: DeliveryContext; request: ViewSubmitRequest }): Promise<ViewSubmitResponse> {
  const { state } = context.emulator;
  const stored = openViewOf({ state, viewId: request.viewId, user: request.user });
  // Slack clears the previous errors when the form is sent again.
  state.views.setSubmission({ viewId: request.viewId, values: request.values });
  const answer = await context.receiver.interaction(
    viewSubmissionBody({
      workspace: payloadWorkspace({ state }),
      user: payloadUser({ state, userId: request.user }),
      triggerId: state.handles.issueTrigger(request.user),
      view: { ...stored.view, state: { values: request.values }, hash: stored.hash },
    }),
  );
  return applyViewAnswer({ state, request, stored, answer: parseAnswer(answer) });
}

/** Cancel (or ×): Slack tells the bot only when the view asked for `notify_on_close`. */
export async function deliverViewClosed({ context, request }: { context: DeliveryContext; request: { user: string; viewId: string } }): Promise<void> {
  const { state } = context.emulator;
  const stored = openViewOf({ state, viewId: request.viewId, user: request.user });
  const clearsStack = stored.view.clear_on_close === true;
  if (clearsStack) state.views.closeAll(request.user);
  else state.views.close(request.viewId);
  if (stored.view.notify_on_close !== true) return;
  await context.receiver.interaction(
    viewClosedBody({ workspace: payloadWorkspace({ state }), user: payloadUser({ state, userId: request.user }), view: stored.view, isCleared: clearsStack }),
  );
}

function openViewOf(options: { state: WorkspaceState; viewId: string; user: string }): StoredView {
  const stored = options.state.views.find(options.viewId);
  if (!stored || stored.user !== options.user) throw new DeliveryRefused('viewId', 'no such view open for this user');
  return stored;
}

function parseAnswer(body: string): Record<string, unknown> {
  if (body.trim() === '') return {};
  try {
    const parsed: unknown = JSON.parse(body);
    return isPlainObject(parsed) ? parsed : {};
  } catch {
    // Slack ignores a body that is not JSON and closes the view, as for an empty one.
    return {};
  }
}

function applyViewAnswer(options: { state: WorkspaceState; request: ViewSubmitRequest; stored: StoredView; answer: Record<string, unknown> }): ViewSubmitResponse {
  const { state, request, stored, answer } = options;
  const { viewId, user } = request;
  switch (answer.response_action) {
    case undefined:
      state.views.close(viewId);
      return { ok: true, outcome: 'closed' };
    case 'clear':
      state.views.closeAll(user);
      return { ok: true, outcome: 'closed' };
    case 'errors': {
      const errors = stringRecord(answer.errors);
      state.views.setSubmission({ viewId, values: request.values, errors });
      return { ok: true, outcome: 'errors', errors };
    }
    case 'update': {
      const previousViewId = typeof stored.view.previous_view_id === 'string' ? stored.view.previous_view_id : null;
      const completed = completeView({ state, submitted: answer.view, viewId, previousViewId });
      if ('ok' in completed) return { ok: false, error: `the bot's response_action update was refused: ${String(completed.error)}` };
      state.views.replace({ viewId, stored: { ...completed, user } });
      return { ok: true, outcome: 'updated' };
    }
    case 'push': {
      const pushedViewId = state.nextId('V');
      const completed = completeView({ state, submitted: answer.view, viewId: pushedViewId, previousViewId: viewId });
      if ('ok' in completed) return { ok: false, error: `the bot's response_action push was refused: ${String(completed.error)}` };
      state.views.push({ viewId: pushedViewId, stored: { ...completed, user } });
      return { ok: true, outcome: 'pushed' };
    }
    default:
      return { ok: false, error: `the bot answered an unknown response_action ${JSON.stringify(answer.response_action)}` };
  }
}

function stringRecord(value: unknown): Record<string, string> {
  if (!isPlainObject(value)) return {};
  return Object.fromEntries(Object.entries(value).map(([key, message]) => [key, String(message)]));
}
