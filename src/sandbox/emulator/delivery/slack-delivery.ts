import type { ActionRequest, CommandRequest, PostMessageRequest, ViewSubmitRequest, ViewSubmitResponse } from '../../sandbox-api.js';
import type { SlackEmulator } from '../slack-emulator.js';
import { createBotReceiver } from './bot-receiver.js';
import { deliverAction } from './deliver-action.js';
import { deliverCommand } from './deliver-command.js';
import { deliverMessage } from './deliver-message.js';
import { deliverViewClosed, deliverViewSubmission } from './deliver-view.js';

/**
 * What people do in the emulated workspace, delivered to the bot's receiver URL as the signed
 * requests Slack would send. Each throws `DeliveryRefused` when it names something that does not
 * exist and `DeliveryFailed` when the bot answers with an HTTP error.
 */
export interface SlackDelivery {
  postMessage(request: PostMessageRequest): Promise<{ ts: string }>;
  clickAction(request: ActionRequest): Promise<void>;
  submitView(request: ViewSubmitRequest): Promise<ViewSubmitResponse>;
  closeView(request: { user: string; viewId: string }): Promise<void>;
  runCommand(request: CommandRequest): Promise<void>;
}

export function createSlackDelivery(options: { emulator: SlackEmulator; receiverUrl: string; signingSecret: string }): SlackDelivery {
  const context = { emulator: options.emulator, receiver: createBotReceiver({ url: options.receiverUrl, signingSecret: options.signingSecret }) };
  return {
    postMessage: (request) => deliverMessage({ context, request }),
    clickAction: (request) => deliverAction({ context, request }),
    submitView: (request) => deliverViewSubmission({ context, request }),
    closeView: (request) => deliverViewClosed({ context, request }),
    runCommand: (request) => deliverCommand({ context, request }),
  };
}
