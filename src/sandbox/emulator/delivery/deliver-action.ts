import type { ActionRequest } from '../../sandbox-api.js';
import { toSlackMessage } from '../web-api/method-answers.js';
import { actionFromElement } from './action-element-state.js';
import { DeliveryRefused } from './bot-receiver.js';
import { payloadChannel, payloadUser, payloadWorkspace, type DeliveryContext } from './delivery-context.js';
import { blockActionsBody, type SlackPayload } from './interaction-payloads.js';

/**
 * A click or a choice in a message, an ephemeral or a modal, delivered as Slack's `block_actions`:
 * with a trigger id views.open accepts (and that opens the modal on this person's screen) and, on
 * messages, a `response_url` served by the emulator.
 */
export async function deliverAction({ context, request }: { context: DeliveryContext; request: ActionRequest }): Promise<void> {
  const { emulator } = context;
  const { state } = emulator;
  const surface = surfaceOf({ context, request });
  await context.receiver.interaction(
    blockActionsBody({
      workspace: payloadWorkspace({ state }),
      user: payloadUser({ state, userId: request.user }),
      triggerId: state.handles.issueTrigger(request.user),
      ...surface,
      action: actionFromElement({
        element: request.element,
        actionId: request.actionId,
        // Slack gives blocks sent without a block_id one of its own.
        blockId: request.blockId === '' ? `b${state.nextId('')}` : request.blockId,
        actionTs: state.nextTs(),
        selected: request.selected,
      }),
    }),
  );
}

type Surface = Pick<Parameters<typeof blockActionsBody>[0], 'container' | 'channel' | 'message' | 'view' | 'responseUrl' | 'stateValues'>;

function surfaceOf({ context, request }: { context: DeliveryContext; request: ActionRequest }): Surface {
  const { emulator } = context;
  const { state } = emulator;
  const { container } = request;
  if (container.type === 'view') {
    const stored = state.views.find(container.viewId);
    if (!stored || stored.user !== request.user) throw new DeliveryRefused('container.viewId', 'no such view open for this user');
    const values = stored.values ?? {};
    return { container: { type: 'view', view_id: container.viewId }, view: { ...stored.view, state: { values } }, stateValues: values };
  }
  const channel = payloadChannel({ state, channelId: request.channel });
  if (container.type === 'ephemeral') {
    const ephemeral = state.ephemerals.find(container.id);
    if (!ephemeral || ephemeral.user !== request.user) throw new DeliveryRefused('container.id', 'no such ephemeral message for this user');
    const thread = ephemeral.threadTs === undefined ? {} : { thread_ts: ephemeral.threadTs };
    return {
      container: { type: 'message', message_ts: ephemeral.id, channel_id: ephemeral.channel, is_ephemeral: true, ...thread },
      channel: payloadChannel({ state, channelId: ephemeral.channel }),
      responseUrl: responseUrl({ context, target: { channel: ephemeral.channel, user: request.user, threadTs: ephemeral.threadTs, source: { kind: 'ephemeral', id: ephemeral.id } } }),
    };
  }
  const message = state.messages.find({ channel: request.channel, ts: container.messageTs });
  if (!message) throw new DeliveryRefused('container.messageTs', 'no message with this ts in the channel');
  const thread = message.thread_ts === undefined ? {} : { thread_ts: message.thread_ts };
  const slackMessage: SlackPayload = toSlackMessage({ message, state });
  return {
    container: { type: 'message', message_ts: message.ts, channel_id: message.channel, is_ephemeral: false, ...thread },
    channel,
    message: slackMessage,
    responseUrl: responseUrl({ context, target: { channel: message.channel, user: request.user, threadTs: message.thread_ts, source: { kind: 'message', ts: message.ts } } }),
  };
}

function responseUrl({
  context,
  target,
}: {
  context: DeliveryContext;
  target: { channel: string; user: string; threadTs: string | undefined; source: { kind: 'message'; ts: string } | { kind: 'ephemeral'; id: string } };
}): string {
  const { threadTs, ...rest } = target;
  const id = context.emulator.state.handles.addResponseTarget({ ...rest, ...(threadTs === undefined ? {} : { threadTs }) });
  return context.emulator.responseUrl(id);
}
