import type { PostMessageRequest } from '../../sandbox-api.js';
import { appMentionEnvelope, messageEnvelope } from './event-envelopes.js';
import { DeliveryRefused } from './bot-receiver.js';
import type { DeliveryContext } from './delivery-context.js';

/**
 * A person posts in a channel (or a thread): the message is stored, and the bot gets the `message`
 * event, plus `app_mention` when the text mentions it, as Slack sends both for one post.
 */
export async function deliverMessage({ context, request }: { context: DeliveryContext; request: PostMessageRequest }): Promise<{ ts: string }> {
  const { state } = context.emulator;
  if (request.threadTs !== undefined && !state.messages.find({ channel: request.channel, ts: request.threadTs })) {
    throw new DeliveryRefused('threadTs', 'no message with this ts in the channel');
  }
  const ts = state.nextTs();
  state.messages.store({
    channel: request.channel,
    ts,
    ...(request.threadTs === undefined ? {} : { thread_ts: request.threadTs }),
    user: request.user,
    text: request.text,
  });
  const { teamId, botUserId } = state.identity;
  const common = {
    user: request.user,
    text: request.text,
    channel: request.channel,
    ts,
    teamId,
    botUserId,
    ...(request.threadTs === undefined ? {} : { threadTs: request.threadTs }),
  };
  const envelopes = [messageEnvelope(common)];
  if (request.text.includes(`<@${botUserId}>`)) envelopes.push(appMentionEnvelope(common));
  await Promise.all(envelopes.map((envelope) => context.receiver.event(envelope)));
  return { ts };
}
