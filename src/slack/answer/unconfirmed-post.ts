import type { WebClient } from '@slack/web-api';
import { asSentToSlack } from '../well-formed-web-client.js';

/**
 * How far behind this host's clock Slack's may be when a message's timestamp is bounded by it: a post
 * made at `now` by this host's clock is looked for among the replies newer than `now` less this. Slack
 * stamps the message with its own clock, so a host whose clock runs ahead of Slack's by more than this
 * would look too late and not find it. A wider margin only reads more replies, and lets an identical
 * bot reply posted that much earlier be taken for it.
 */
export const POST_CLOCK_SKEW_MS = 60_000;

/** How many pages of replies (200 each) a search reads before it gives up. */
const MAX_PAGES = 5;

/**
 * A post Slack may have applied although its reply was lost (`mayHaveBeenApplied`): what it said, and a
 * message timestamp it must be newer than.
 */
export interface UnconfirmedPost {
  text: string;
  after: string;
  /**
   * Text its blocks carry (a card's post mark, `withPostMark`): for a post whose text another post may
   * share (two cards of one tool, one card posted again by two processes), which only this tells apart.
   */
  carrying?: string;
}

/** The lower bound of a post about to be made: the answer's message before it, else this host's clock less the skew margin. */
export function postedAfter(previousTs: string | undefined, now: number = Date.now()): string {
  return previousTs ?? ((now - POST_CLOCK_SKEW_MS) / 1000).toFixed(6);
}

/** The later of two message timestamps (`postedAfter`'s bounds). */
export function laterTs(left: string, right: string): string {
  return microseconds(left) >= microseconds(right) ? left : right;
}

/**
 * The message an unconfirmed post left in the thread, if it left one: the newest bot reply newer than
 * `post.after` whose text is exactly the post's as sent (and whose blocks carry `post.carrying`), that
 * is not one of `known` (the answer's own messages).
 * Undefined when the thread has none, which is taken to mean Slack did not apply it. Throws when the
 * thread cannot be read: the post's outcome is then still unknown.
 */
export async function findUnconfirmedPost(options: {
  client: WebClient;
  channel: string;
  threadTs: string;
  post: UnconfirmedPost;
  known: readonly string[];
}): Promise<string | undefined> {
  const { client, channel, threadTs, post, known } = options;
  const after = microseconds(post.after);
  // Compared with the text as it was sent: a lone surrogate in it reached Slack as U+FFFD (`sendWellFormedSlackArguments`).
  const text = asSentToSlack(post.text);
  let found: { ts: string; at: number } | undefined;
  let cursor: string | undefined;
  for (let page = 0; page < MAX_PAGES; page += 1) {
    const response = await client.conversations.replies({ channel, ts: threadTs, oldest: post.after, limit: 200, ...(cursor ? { cursor } : {}) });
    for (const message of response.messages ?? []) {
      const ts = message.ts ?? '';
      const at = microseconds(ts);
      if (ts === threadTs || !message.bot_id || message.text !== text || at <= after || known.includes(ts)) continue;
      if (post.carrying !== undefined && !JSON.stringify(message.blocks ?? []).includes(post.carrying)) continue;
      if (found === undefined || at > found.at) found = { ts, at };
    }
    cursor = response.response_metadata?.next_cursor || undefined;
    if (!response.has_more || cursor === undefined) break;
  }
  return found?.ts;
}

/** `1800000000.000100` → 1800000000000100, to compare timestamps exactly. */
function microseconds(ts: string): number {
  const [seconds = '0', fraction = ''] = ts.split('.');
  return Number(seconds) * 1_000_000 + Number(fraction.padEnd(6, '0').slice(0, 6));
}
