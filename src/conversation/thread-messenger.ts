import type { CardCopy, PendingStep } from '../approvals/pending-step.js';
import type { UnconfirmedCardPost } from '../errors/countersign-error.js';

/** Where a copy of a card goes outside its thread. */
export type CardCopyTarget = { kind: 'channel'; channel: string } | { kind: 'dm'; userId: string };

/**
 * What the core needs from the chat surface, in its own words, and nothing more. The Slack adapter
 * implements it with the Web API and renders cards itself, so no Block Kit reaches the core.
 */

export interface EarlierThreadMessage {
  ts: string;
  userId?: string;
  fromBot: boolean;
  text: string;
}

/** An answer shown in the thread while the model writes it. */
export interface AnswerStream {
  /** More of the answer; shown within about a second. Never throws: display failures are logged. */
  append(markdownDelta: string): void;
  /** Shows `markdown` as the complete answer and ends the stream; throws if Slack refuses. */
  finish(markdown: string): Promise<void>;
  /** The messages the answer occupies so far. */
  messageTs(): string[];
}

export interface AnswerStreamOptions {
  channel: string;
  threadTs: string;
  /** Who asked and where: Slack's native streaming needs them in channels. */
  recipientUserId: string;
  recipientTeamId: string;
  /** Told whenever the answer takes another message, so a process that dies can be cleaned up after. */
  onMessages?: (ts: readonly string[]) => void;
  /** Messages a dead process left half written for this answer: reused rather than left behind. */
  replacing?: readonly string[];
  /**
   * Whom the answer may notify with `<@U…>`: the people already in the thread. Anyone else the
   * model names is shown as `@name` that notifies no one. Default: nobody.
   */
  mentionableUserIds?: readonly string[];
  /**
   * Awaited before every Slack write of the stream, including the timed edits; a throw means the
   * writer no longer holds the thread (see `Lease`), and nothing more is written.
   */
  guard?: () => Promise<void>;
}

/** What `deleteMessages` could not remove for now. */
export interface UndeletedMessages {
  ts: string[];
  /** Slack asked for this long before another call (a rate limit's retry-after). */
  retryAfterMs?: number;
}

export interface ThreadMessenger {
  /**
   * Posts model or tool text: converted to mrkdwn, pings neutralised, split within Slack limits.
   * `replacing` are messages of an earlier, unfinished showing of the same answer: they are
   * rewritten instead of leaving a half answer above the whole one. `mentionableUserIds` as for
   * `startAnswer`. Resolves with the messages the answer occupies (those of `replacing` it kept included).
   */
  postAnswer(options: { channel: string; threadTs: string; markdown: string; replacing?: readonly string[]; mentionableUserIds?: readonly string[] }): Promise<string[]>;
  /** Starts showing an answer as it is written. */
  startAnswer(options: AnswerStreamOptions): AnswerStream;
  /**
   * Whether `markdown`, posted or streamed as an answer, would show nothing in the thread (text
   * that is not blank can render to nothing: an empty code block). Pure; such a turn has no answer.
   */
  answerShowsNothing(options: { markdown: string }): boolean;
  /**
   * `markdown` with a code block it leaves open at its end (a model stopped inside it) closed, so
   * text added after it is not shown as code. Pure.
   */
  withOpenCodeClosed(options: { markdown: string }): string;
  /**
   * Posts a short notice the bot itself wrote (errors, notes); any pings in it are neutralised. It
   * must look like nothing an answer can: the model's text can copy its words, not its shape.
   * `unlessPostedAfter`: as `postMention`'s, for a notice tried again after one that failed (its
   * reply lost, or another process telling the same): posted once, not twice.
   */
  postNotice(options: { channel: string; threadTs: string; text: string; retryButton?: boolean; unlessPostedAfter?: string }): Promise<void>;
  /**
   * Posts text the bot wrote from trusted config that is meant to notify people (reminders). With
   * `unlessPostedAfter` (a message ts in that thread: the card or copy there) it first looks for a bot
   * message with exactly this text newer than that one, and posts nothing if there is one: a try
   * after one whose reply was lost (Slack may have posted it) does not post it twice. Throws a
   * `SlackCallError` whose `tryLater` says whether a later try may succeed.
   */
  postMention(options: { channel: string; threadTs: string; text: string; unlessPostedAfter?: string }): Promise<void>;
  /**
   * Posts the approval card of `step` in its thread; resolves with the card's message ts. A post
   * whose reply was lost (Slack may have applied it) resolves with the card found in the thread, if
   * there is one, and throws otherwise: a `CardPostUnconfirmedError` when the thread could not be
   * searched, whose `post` finds the card later (`findPostedCard`); a `SlackCallError` whose
   * `tryLater` is true when Slack posted nothing but a later try may get past the failure (Slack
   * failing or throttling for now).
   */
  postStepCard(options: { step: PendingStep }): Promise<string>;
  /**
   * The card a post whose outcome was not known left in the thread (`CardPostUnconfirmedError`), or
   * undefined when it left none (Slack did not apply it). Throws when the thread cannot be read.
   */
  findPostedCard(options: { channel: string; threadTs: string; post: UnconfirmedCardPost }): Promise<string | undefined>;
  /** Shows `step` as it is now on its card (`step.cardTs`): decisions, versions, expiry. */
  updateStepCard(options: { step: PendingStep & { cardTs: string } }): Promise<void>;
  /** Posts a copy of `step`'s card outside its thread, linked to the thread (`step.cardLink`). */
  postStepCopy(options: { step: PendingStep; target: CardCopyTarget }): Promise<CardCopy>;
  /** Shows `step` as it is now on one of its copies. */
  updateStepCopy(options: { step: PendingStep; copy: CardCopy }): Promise<void>;
  /** A link to a message; undefined when Slack gives none (best effort). */
  permalinkOf(options: { channel: string; ts: string }): Promise<string | undefined>;
  postEphemeral(options: { channel: string; userId: string; threadTs?: string; text: string }): Promise<void>;
  /**
   * Removes messages the bot posted, e.g. an answer a fenced process started but never recorded; a
   * message already gone (or that Slack says cannot be removed) counts as removed. Never throws: what
   * Slack would not remove now (an outage, rate limits) is answered, to be tried again.
   */
  deleteMessages(options: { channel: string; ts: readonly string[] }): Promise<UndeletedMessages>;
  /** Best effort: a status that cannot be shown must not fail the turn. */
  setStatus(options: { channel: string; threadTs: string; status: string }): Promise<void>;
  readThread(options: { channel: string; threadTs: string }): Promise<EarlierThreadMessage[]>;
}
