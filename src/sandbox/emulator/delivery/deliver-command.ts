import type { CommandRequest } from '../../sandbox-api.js';
import { answerResponseUrl } from '../web-api/response-url-answers.js';
import { isPlainObject } from '../web-api/slack-request-arguments.js';
import { payloadChannel, payloadUser, payloadWorkspace, type DeliveryContext } from './delivery-context.js';
import { slashCommandFields } from './interaction-payloads.js';

/**
 * A slash command, form-encoded like Slack's, with a `response_url` served by the emulator. Text
 * in the bot's acknowledgement is shown the way Slack shows it: to the person who typed the
 * command (or in the channel for `response_type: in_channel`).
 */
export async function deliverCommand({ context, request }: { context: DeliveryContext; request: CommandRequest }): Promise<void> {
  const { emulator } = context;
  const { state } = emulator;
  const target = { channel: request.channel, user: request.user };
  const fields = slashCommandFields({
    workspace: payloadWorkspace({ state }),
    user: payloadUser({ state, userId: request.user }),
    channel: payloadChannel({ state, channelId: request.channel }),
    command: request.command,
    text: request.text,
    responseUrl: emulator.responseUrl(state.handles.addResponseTarget(target)),
    triggerId: state.handles.issueTrigger(request.user),
  });
  const acknowledgement = (await context.receiver.command(fields)).trim();
  if (acknowledgement === '') return;
  answerResponseUrl({ state, target, body: acknowledgementMessage(acknowledgement) });
}

/** Bolt sends `ack('text')` as plain text and `ack({ … })` as JSON. */
function acknowledgementMessage(body: string): Record<string, unknown> {
  try {
    const parsed: unknown = JSON.parse(body);
    if (isPlainObject(parsed)) return parsed;
  } catch {
    // Plain text.
  }
  return { text: body };
}
