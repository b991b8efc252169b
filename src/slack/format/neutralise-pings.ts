import { ZERO_WIDTH_SPACE } from './escape-mrkdwn.js';

/**
 * Whom text may notify with `<@U…>`. For the model's answers: the people already in the thread;
 * anyone else it names is shown as `@name` that notifies no one. Empty (the default): nobody.
 */
export type MentionableUserIds = ReadonlySet<string> | readonly string[];

/** What a `<…>` written into text is to Slack. */
export type SlackReference =
  | { kind: 'user'; userId: string; label: string }
  | { kind: 'channel' }
  | { kind: 'date' }
  /** `<!here>`, `<!channel|@channel>`, `<!subteam^S…|@team>` and any future form. */
  | { kind: 'special'; label: string }
  | { kind: 'link'; url: string; label: string }
  | { kind: 'other' };

/** Every `<…>`; the body of one cannot hold another. */
const SLACK_REFERENCE = /<([^<>]*)>/g;
const USER_ID = /^[UW][A-Z0-9]{2,40}$/;
const CHANNEL = /^#C[A-Z0-9]{2,40}(?:\|[\p{L}\p{N}._-]{0,80})?$/u;
/** `<!date^…>`, the one harmless `<!…>`. */
const DATE = /^!date\^\d{1,12}\^[{}\p{L}\p{N}\s:,._/-]{1,100}(?:\|[\p{L}\p{N}\s:,._/+-]{0,100})?$/u;
const LINK = /^(?:https?:\/\/|mailto:)/i;
/**
 * Plain words Slack may still turn into pings (`link_names`, `verbatim: false` blocks). `_` counts
 * as a boundary because `_@here_` is italic markup around the word.
 */
const PLAIN_BROADCAST = /(^|[^\p{L}\p{N}])@(channel|here|everyone)(?![\p{L}\p{N}])/giu;

export interface NeutralisePingsOptions {
  /** Who may stay mentioned: `anyone` for text the bot wrote itself about people (a grant's owner). Default: nobody. */
  mentionableUserIds?: MentionableUserIds | 'anyone';
}

/**
 * Makes already-formatted mrkdwn (notices, tool output, stored replies) unable to notify a channel or
 * a user group, or anyone not mentionable: special mentions and those user mentions become a visible
 * `@​here` / `@​name` with a zero-width space after the `@`, and plain `@here`/`@channel`/`@everyone`
 * get the same space.
 */
export function neutralisePings(text: string, { mentionableUserIds = [] }: NeutralisePingsOptions = {}): string {
  const defused = text.replace(SLACK_REFERENCE, (whole, body: string) => {
    const reference = slackReference(body);
    if (reference.kind === 'special') return inertMention(reference.label);
    if (reference.kind !== 'user' || mentionableUserIds === 'anyone') return whole;
    return liveMention(reference, mentionableUserIds) ?? inertUserMention(reference);
  });
  return neutraliseBroadcastWords(defused);
}

/** Just after each plain ping word's `@`: where `neutralisePlainBroadcasts` puts its zero-width space. */
export function plainBroadcastOffsets(text: string): number[] {
  return [...text.matchAll(PLAIN_BROADCAST)].map((match) => match.index + (match[1] ?? '').length + 1);
}

/** `neutralisePlainBroadcasts` over mrkdwn, leaving the `<…>` links and mentions in it alone. */
export function neutraliseBroadcastWords(mrkdwn: string): string {
  return mrkdwn
    .split(/(<[^<>]*>)/)
    .map((piece, index) => (index % 2 === 1 ? piece : neutralisePlainBroadcasts(piece)))
    .join('');
}

/** Only the plain-word part of `neutralisePings`, for text that has no `<…>` left (already escaped). */
export function neutralisePlainBroadcasts(text: string): string {
  return text.replace(PLAIN_BROADCAST, (_whole, before: string, name: string) => `${before}${inertMention(name)}`);
}

export function slackReference(body: string): SlackReference {
  const separator = body.indexOf('|');
  const [name, label] = separator === -1 ? [body, ''] : [body.slice(0, separator), body.slice(separator + 1)];
  if (body.startsWith('@')) return { kind: 'user', userId: name.slice(1), label: label.trim() };
  if (CHANNEL.test(body)) return { kind: 'channel' };
  if (DATE.test(body)) return { kind: 'date' };
  if (body.startsWith('!')) return { kind: 'special', label: specialMentionLabel(body.slice(1)) };
  return LINK.test(name) ? { kind: 'link', url: name, label } : { kind: 'other' };
}

/**
 * Rewrites each `<…>` in `text` with `reference`, and each stretch of text between them with
 * `plain`; a `<…>` for which `reference` gives `undefined` stays in the text around it.
 */
export function mapSlackReferences(text: string, reference: (reference: SlackReference, whole: string) => string | undefined, plain: (text: string) => string): string {
  let output = '';
  let last = 0;
  for (const match of text.matchAll(SLACK_REFERENCE)) {
    const replaced = reference(slackReference(match[1] ?? ''), match[0]);
    if (replaced === undefined) continue;
    output += plain(text.slice(last, match.index)) + replaced;
    last = match.index + match[0].length;
  }
  return output + plain(text.slice(last));
}

/** `<@U…>` for someone who may be notified (a label is dropped: Slack shows the current name), else `undefined`. */
export function liveMention({ userId }: { userId: string }, mentionable: MentionableUserIds): string | undefined {
  const allowed = Array.isArray(mentionable) ? mentionable.includes(userId) : (mentionable as ReadonlySet<string>).has(userId);
  return allowed && USER_ID.test(userId) ? `<@${userId}>` : undefined;
}

/** `@label` (or `@U…`) for someone who may not be notified: the same readable form in every mode. */
export function inertUserMention({ userId, label }: { userId: string; label: string }): string {
  return inertMention(label || userId);
}

/** What a `<!…>` body reads as: its label if it has one, else its name. */
export function specialMentionLabel(body: string): string {
  const separator = body.indexOf('|');
  const label = separator === -1 ? '' : body.slice(separator + 1).replace(/^[@\u200B]+/, '').trim();
  if (label !== '') return label;
  const name = separator === -1 ? body : body.slice(0, separator);
  return name.startsWith('subteam^') ? 'group' : name;
}

/** `@​name` that notifies no one; a ping word inside the name is defused too. */
export function inertMention(name: string): string {
  return `@${ZERO_WIDTH_SPACE}${neutralisePlainBroadcasts(name.replace(/^[@\u200B]+/, ''))}`;
}
