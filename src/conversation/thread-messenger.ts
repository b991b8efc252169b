/**
 * What the conversation needs from Slack, and nothing more. The Slack adapter implements it with
 * the Web API; keeping it narrow keeps the agent side free of Bolt types.
 */
export interface SlackCard {
  text: string;
  blocks: unknown[];
}

export interface EarlierThreadMessage {
  ts: string;
  userId?: string;
  fromBot: boolean;
  text: string;
}

export interface ThreadMessenger {
  /** Posts model or tool text: converted to mrkdwn, pings neutralised, split within Slack limits. */
  postAnswer(options: { channel: string; threadTs: string; markdown: string }): Promise<void>;
  /** Posts a short notice the bot itself wrote (errors, notes); any pings in it are neutralised. */
  postNotice(options: { channel: string; threadTs: string; text: string; retryButton?: boolean }): Promise<void>;
  /** Posts text the bot wrote from trusted config that is meant to notify people (reminders). */
  postMention(options: { channel: string; threadTs: string; text: string }): Promise<void>;
  postCard(options: { channel: string; threadTs: string; card: SlackCard }): Promise<string>;
  updateCard(options: { channel: string; ts: string; card: SlackCard }): Promise<void>;
  postEphemeral(options: { channel: string; userId: string; threadTs?: string; text: string }): Promise<void>;
  /** Best effort: a status that cannot be shown must not fail the turn. */
  setStatus(options: { channel: string; threadTs: string; status: string }): Promise<void>;
  readThread(options: { channel: string; threadTs: string }): Promise<EarlierThreadMessage[]>;
}
