import { escapeMrkdwn } from './escape-mrkdwn.js';
import { labelNamesAnotherAddress, parseLinkTarget } from './link-label.js';
import { neutralisePlainBroadcasts } from './neutralise-pings.js';

/**
 * A link from model output as Slack mrkdwn. The model's text is untrusted, so the label must not
 * hide where the link goes: a label that names some other address (`[https://bank.com](https://evil)`,
 * `[bank.com login](…)`) is shown as plain text with the real URL after it. Addresses Slack cannot
 * link (`javascript:`, relative paths) stay visible as text.
 */
export function linkToMrkdwn({ url, label }: { url: string; label: string }): string {
  const target = parseLinkTarget(url);
  const cleanLabel = label.replace(/\*\*|__|~~|`/g, '').trim();
  const shownLabel = neutralisePlainBroadcasts(escapeMrkdwn(cleanLabel));
  if (target === undefined) {
    return neutralisePlainBroadcasts(escapeMrkdwn(cleanLabel === '' ? url : `${cleanLabel} (${url})`));
  }
  // `|` would end the URL early inside `<url|label>`; `&` must be escaped like everywhere else.
  const href = escapeMrkdwn(target.href.replaceAll('|', '%7C'));
  if (cleanLabel === '' || cleanLabel === url.trim()) return `<${href}>`;
  if (labelNamesAnotherAddress({ label: cleanLabel, target })) return `${shownLabel} (<${href}>)`;
  return `<${href}|${shownLabel}>`;
}
