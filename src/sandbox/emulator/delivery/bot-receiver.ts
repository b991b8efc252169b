import { postSlackEvent, postSlackInteraction, postSlashCommand } from './signed-request.js';

/** The bot answered a delivery with an HTTP error (a bad signature, a listener that never acked). */
export class DeliveryFailed extends Error {
  override readonly name = 'DeliveryFailed';
  constructor(readonly status: number, detail: string) {
    super(`the bot answered HTTP ${status}${detail === '' ? '' : `: ${detail.slice(0, 200)}`}`);
  }
}

/** A delivery that cannot be made because what it names does not exist (no such message, view…). */
export class DeliveryRefused extends Error {
  override readonly name = 'DeliveryRefused';
  constructor(readonly field: string, message: string) {
    super(`${field}: ${message}`);
  }
}

/** The bot's Bolt receiver (`…/slack/events`), reached with requests signed like Slack's. */
export interface BotReceiver {
  event(envelope: object): Promise<void>;
  /** Resolves with the response body: a view submission's `response_action`, if any. */
  interaction(payload: object): Promise<string>;
  command(fields: Record<string, string>): Promise<string>;
}

export function createBotReceiver(options: { url: string; signingSecret: string }): BotReceiver {
  const answered = async (response: Response): Promise<string> => {
    const body = await response.text();
    if (!response.ok) throw new DeliveryFailed(response.status, body);
    return body;
  };
  return {
    async event(envelope) {
      await answered(await postSlackEvent({ ...options, envelope }));
    },
    interaction: async (payload) => answered(await postSlackInteraction({ ...options, payload })),
    command: async (fields) => answered(await postSlashCommand({ ...options, fields })),
  };
}
