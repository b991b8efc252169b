import { CHANNELS_UNKNOWN_TEXT, type ChannelsOf, NOT_A_MEMBER_TEXT } from '../channel-membership.js';

/**
 * How long a submit waits for Slack to say which channels the person is in. Its answer must reach
 * Slack within 3 s, after the decision is recorded; a rate-limited or slow `users.conversations`
 * (or a 429 elsewhere, which pauses every call of the shared client) must not push it past them,
 * where Slack shows its own error while the decision would still land afterwards.
 */
export const FORM_MEMBERSHIP_WAIT_MS = 1_000;

/** The channel a form's submit is judged as made in, and, when the claim did not hold, what to tell the person if refused. */
export interface FormChannel {
  channel: string | undefined;
  refusal?: string;
}

/**
 * A click proves its channel by being delivered there; a form's submit names none, so the forms
 * carry the channel they were opened from in `private_metadata`, which whoever submits can write.
 * Claiming the thread's channel is what makes someone count as a `channel` approver (or, in a
 * scheduled turn, someone who may answer its question), so that claim holds only for someone
 * Slack says is in the channel now, as for a click on App Home: not for a forged claim from
 * someone who only sees a copy, nor for a form opened in the thread by someone removed from the
 * channel since. Otherwise (or when Slack cannot say) the submit is judged, refused and audited
 * as one from elsewhere, with `refusal` to show in the form. A copy's channel only narrows what
 * the person may do and must be a copy the step recorded, so it is taken as claimed.
 */
export async function formChannel({
  claimed,
  threadChannel,
  userId,
  channelsOf,
  waitMs = FORM_MEMBERSHIP_WAIT_MS,
}: {
  claimed: string;
  threadChannel: string | undefined;
  userId: string;
  channelsOf: ChannelsOf;
  waitMs?: number;
}): Promise<FormChannel> {
  if (claimed !== threadChannel) return { channel: claimed };
  const memberOf = await withinDeadline(channelsOf(userId), waitMs);
  if (memberOf?.has(claimed)) return { channel: claimed };
  return { channel: undefined, refusal: memberOf ? NOT_A_MEMBER_TEXT : CHANNELS_UNKNOWN_TEXT };
}

/** `promise`'s value, or undefined once `ms` passed first (the read goes on and fills the cache for the next try). */
async function withinDeadline<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), ms);
  });
  try {
    return await Promise.race([promise.catch(() => undefined), late]);
  } finally {
    clearTimeout(timer);
  }
}
