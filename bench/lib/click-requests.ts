import { clickRequest, type Card, type RequestSpec, type Thread } from './workload.js';

/**
 * The user id clicking the index-th card. Never the requester (the bot refuses self-approval), and
 * spread over a thousand users so no per-user state grows unusually large.
 */
export function approver(index: number): string {
  return `UAPPROVER${String(index % 1000).padStart(4, '0')}`;
}

/** Approve clicks for the bot, one per posted card. */
export function botClicks(cards: Card[]): RequestSpec[] {
  return cards.map((card, index) =>
    clickRequest({ channel: card.thread.channel, threadTs: card.thread.threadTs, cardTs: card.cardTs, value: card.approveValue, user: approver(index) }),
  );
}

/** Clicks for the bare app: any signed block_actions payload is routed to its catch-all action. */
export function bareClicks(count: number): RequestSpec[] {
  return Array.from({ length: count }, (_, index) =>
    clickRequest({ channel: 'CBARE0001', threadTs: '1600000000.000100', cardTs: `1600000000.${String(index).padStart(6, '0')}`, value: `step${index}:call${index}`, user: approver(index) }),
  );
}

/** Approve clicks for the Chat SDK baseline: its action handler posts the decision in the click's thread. */
export function chatSdkClicks(threads: Thread[]): RequestSpec[] {
  return threads.map((thread, index) =>
    clickRequest({ channel: thread.channel, threadTs: thread.threadTs, cardTs: `${thread.threadTs.split('.')[0]}.000200`, value: 'approve', user: approver(index), actionId: 'approve' }),
  );
}
