import type { WebClient } from '@slack/web-api';

/** A link to a message, or undefined when Slack would not give one (a list still shows without it). */
export async function permalink(client: WebClient, channel: string, ts: string): Promise<string | undefined> {
  try {
    return (await client.chat.getPermalink({ channel, message_ts: ts })).permalink;
  } catch {
    return undefined;
  }
}
