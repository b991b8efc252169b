import { ZERO_WIDTH_SPACE } from './escape-mrkdwn.js';

/**
 * `<!…>` special mentions: `<!here>`, `<!channel|@channel>`, `<!subteam^S123|@team>` and any
 * future form. `<!date^…>` is the one harmless member and is kept.
 */
const SPECIAL_MENTION = /<!([^<>]*)>/g;
const USER_MENTION = /<@([^<>]*)>/g;
/**
 * Plain words Slack may still turn into pings (`link_names`, `verbatim: false` blocks). `_` counts
 * as a boundary because `_@here_` is italic markup around the word.
 */
const PLAIN_BROADCAST = /(^|[^\p{L}\p{N}])@(channel|here|everyone)(?![\p{L}\p{N}])/giu;

export interface NeutralisePingsOptions {
  /** When false, `<@U…>` mentions are shown as text instead of notifying the user. Default true. */
  allowUserMentions?: boolean;
}

/**
 * Makes already-formatted mrkdwn (tool output, stored replies) unable to notify a channel or a
 * user group: special mentions become a visible `@​here` with a zero-width space after the `@`,
 * and plain `@here`/`@channel`/`@everyone` get the same space.
 */
export function neutralisePings(text: string, { allowUserMentions = true }: NeutralisePingsOptions = {}): string {
  let result = text.replace(SPECIAL_MENTION, (whole, body: string) =>
    body.startsWith('date^') ? whole : inertMention(specialMentionLabel(body)),
  );
  if (!allowUserMentions) result = result.replace(USER_MENTION, (_whole, body: string) => `&lt;@${body}&gt;`);
  return neutralisePlainBroadcasts(result);
}

/** Only the plain-word part of `neutralisePings`, for text that has no `<…>` left (already escaped). */
export function neutralisePlainBroadcasts(text: string): string {
  return text.replace(PLAIN_BROADCAST, (_whole, before: string, name: string) => `${before}${inertMention(name)}`);
}

/** What a `<!…>` body reads as: its label if it has one, else its name. */
export function specialMentionLabel(body: string): string {
  const separator = body.indexOf('|');
  const label = separator === -1 ? '' : body.slice(separator + 1).replace(/^@+/, '').trim();
  if (label !== '') return label;
  const name = separator === -1 ? body : body.slice(0, separator);
  return name.startsWith('subteam^') ? 'group' : name;
}

/** `@​name` that notifies no one; a ping word inside the name is defused too. */
export function inertMention(name: string): string {
  return `@${ZERO_WIDTH_SPACE}${neutralisePlainBroadcasts(name.replace(/^@+/, ''))}`;
}
