import { stepRouting } from '../../approvals/card-routing.js';
import type { PendingStep } from '../../approvals/pending-step.js';
import { permalinkLink } from '../../approvals/permalink-link.js';

/** Where the card is shown: in its thread, or as a copy elsewhere (a channel, a DM). */
export type CardPlacement = 'thread' | 'copy';

/**
 * The line that links a card with its other copies. In the thread: where else it waits (and, when
 * the thread card has no buttons, where to decide); on a copy: the thread it came from.
 */
export function cardRoutingLine({ step, placement, actionable }: { step: PendingStep; placement: CardPlacement; actionable: boolean }): string {
  if (placement === 'copy') {
    const link = (permalinkLink(step.cardLink, 'open the thread') ?? '');
    return `:link: Requested in <#${step.channel}>${link === '' ? '' : ` · ${link}`}`;
  }
  // A copy the routing no longer asks for (an edit moved the call under another rule) is no place to decide it.
  const routing = stepRouting(step);
  const copies = (step.copies ?? []).filter((copy) => (copy.kind === 'channel' ? routing.channels.includes(copy.channel) : copy.userId !== undefined && routing.dmUserIds.includes(copy.userId)));
  if (copies.length === 0) return '';
  const places = copies
    .filter((copy) => copy.kind === 'channel')
    .map((copy) => {
      const link = (permalinkLink(copy.permalink, 'open') ?? '');
      return `<#${copy.channel}>${link === '' ? '' : ` (${link})`}`;
    });
  const dms = copies.filter((copy) => copy.kind === 'dm' && copy.userId !== undefined).map((copy) => `<@${copy.userId}>`);
  if (dms.length > 0) places.push(`a DM to ${dms.join(', ')}`);
  const where = places.length <= 1 ? places.join('') : `${places.slice(0, -1).join(', ')} and ${places.at(-1) ?? ''}`;
  return actionable ? `:mailbox_with_mail: Also waiting for approval in ${where}` : `:mailbox_with_mail: Waiting for approval in ${where}`;
}
