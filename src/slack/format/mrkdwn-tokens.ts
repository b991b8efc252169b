import { scheduleNameOf } from '../../conversation/schedule-actor.js';
import { hookNameOf } from '../../approvals/approval-hook.js';
/** Slack user ids: `U…`, or `W…` for Enterprise Grid. */
const USER_ID_PATTERN = /^[UW][A-Z0-9]{2,40}$/;

/**
 * `<@U…>`, which Slack renders as the user's current name. Ids come from stored state, so a
 * malformed one is never spliced into a control sequence (nor echoed: it could read `@here`).
 */
export function isSlackUserId(userId: string): boolean {
  return USER_ID_PATTERN.test(userId);
}

export function userMention(userId: string): string {
  return USER_ID_PATTERN.test(userId) ? `<@${userId}>` : 'an unknown user';
}

const CHANNEL_ID_PATTERN = /^[CDG][A-Z0-9]{2,40}$/;

/** `<#C…>`, which Slack renders as the channel's name (or "private channel" to those outside it). */
export function channelMention(channel: string): string {
  return CHANNEL_ID_PATTERN.test(channel) ? `<#${channel}>` : 'an unknown channel';
}

/** Names hooks and schedules may have (checked at start-up); anything else read back is not shown. */
const HOOK_NAME_PATTERN = /^[A-Za-z0-9_.-]{1,64}$/;

/** Whoever asked or decided: a person as a mention, the approval hook (`hook:<name>`) or a schedule (`schedule:<name>`) by name. */
export function actorMention(userId: string): string {
  const hook = hookNameOf(userId);
  if (hook !== undefined) return HOOK_NAME_PATTERN.test(hook) ? `policy hook \`${hook}\`` : 'a policy hook';
  const schedule = scheduleNameOf(userId);
  if (schedule !== undefined) return HOOK_NAME_PATTERN.test(schedule) ? `schedule \`${schedule}\`` : 'a schedule';
  return userMention(userId);
}

/** JavaScript's `Date` range; anything outside it has no calendar date to show. */
const MAX_EPOCH_MILLISECONDS = 8.64e15;

/**
 * `<!date^…>` renders in each reader's own time zone and locale; the fallback (UTC) is what
 * notifications and old clients show.
 */
export function slackDate({
  epochMilliseconds,
  format = '{date_short_pretty} at {time}',
}: {
  epochMilliseconds: number;
  format?: string;
}): string {
  if (!Number.isFinite(epochMilliseconds) || Math.abs(epochMilliseconds) > MAX_EPOCH_MILLISECONDS) return 'at an unknown time';
  const iso = new Date(epochMilliseconds).toISOString();
  const fallback = `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`;
  return `<!date^${Math.floor(epochMilliseconds / 1000)}^${format}|${fallback}>`;
}
