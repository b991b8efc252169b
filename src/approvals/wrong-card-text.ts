import { stepRouting, threadCardActionable } from './card-routing.js';
import type { PendingStep } from './pending-step.js';
import { permalinkLink } from './permalink-link.js';

const ANOTHER_CHANNEL_TEXT = 'This request belongs to another channel, so nothing changed.';

/**
 * What a person is told whose click `fromThisCard` refused. Slack sends the app clicks on its own
 * messages only, so buttons naming the step in a place the step sends its card to (a channel of its
 * routing or one it records a copy in, the DM of an approver it sends one to) are a copy of its card
 * the step does not record: posted and never recorded (the record failed and Slack would not remove
 * it, or the process stopped between the two), or a second one in that channel. Such a copy is
 * never updated, so it may show a request long decided: the person is sent to the card that is,
 * one with buttons (a channel copy on record when the thread's card has none: the rule decides there).
 */
export function wrongCardText(step: PendingStep, origin: { channel: string | undefined; userId: string }): string {
  const { channel } = origin;
  if (channel === undefined || channel === step.channel) return ANOTHER_CHANNEL_TEXT;
  const routing = stepRouting(step);
  const recorded = step.copies?.find((copy) => copy.channel === channel);
  if (!recorded && !routing.channels.includes(channel) && !routing.dmUserIds.includes(origin.userId)) return ANOTHER_CHANNEL_TEXT;
  const here = permalinkLink(recorded?.permalink, 'open');
  if (here !== undefined) return `This copy of the request is out of date, so nothing changed: use the current one here (${here}).`;
  if (!threadCardActionable(step)) {
    const deciding = step.copies?.find((copy) => copy.kind === 'channel' && routing.channels.includes(copy.channel));
    const where = deciding?.channel ?? routing.channels[0];
    const link = permalinkLink(deciding?.permalink, 'open');
    if (where !== undefined) return `This copy of the request is out of date, so nothing changed: use its card in <#${where}>${link === undefined ? '' : ` (${link})`}.`;
  }
  const thread = permalinkLink(step.cardLink, 'open the thread');
  return `This copy of the request is out of date, so nothing changed: use its card in <#${step.channel}>${thread === undefined ? '' : ` (${thread})`}.`;
}
