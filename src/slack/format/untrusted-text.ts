import { breakBacktickRuns, escapeMrkdwn } from './escape-mrkdwn.js';
import { neutralisePlainBroadcasts } from './neutralise-pings.js';

/**
 * Text from the model, a tool or a user, made safe to splice into mrkdwn we build: no links,
 * mentions or pings, and no backtick run that could open or close a code block around it.
 * Emphasis characters are left alone; at worst they style the text.
 */
export function untrustedTextToMrkdwn(text: string): string {
  return neutralisePlainBroadcasts(breakBacktickRuns(escapeMrkdwn(text)));
}
