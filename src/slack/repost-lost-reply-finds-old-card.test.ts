import { afterEach, describe, expect, it } from 'vitest';
import { CARD_REPOST_CHANNEL as CHANNEL, startCardRepostScene } from '../../test/helpers/card-repost-scene.js';
import { startFlakySlackEdge } from '../../test/helpers/flaky-slack-edge.js';
import { createCardRefreshes } from '../approvals/card-refreshes.js';
import { createWebApiMessenger } from './web-api-messenger.js';

/**
 * Review N. postStepCard looks for a card whose post lost its reply (a 502 from the edge) among the
 * bot's replies of the last minute with the card's text and blocks carrying the step id, with
 * `known: []`. A card posted AGAIN (card-refreshes.ts, Slack refusing to update the first one for
 * good) has the same text and step id as the step's first card: when the re-post was not applied,
 * the lookup "finds" the old card, which is then "recorded in place of itself", the refresh is
 * forgotten, and the thread is told the card "is posted again just above, as the request stands now".
 */

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe('a card posted again whose reply was lost (review N)', () => {
  it('is not taken to be the old card Slack would not update', async () => {
    const { slack, logger, messenger, threadTs, step, store, firstCardTs: first } = await startCardRepostScene({ cleanups });

    // Slack will not update any card any more; every re-post meets a 502 and is not applied (one that is
    // Slack failing for now: the refresh is kept to post it again later).
    slack.failWhen('chat.update', () => true, { error: 'cant_update_message' });
    slack.failWhen('chat.postMessage', (call) => JSON.stringify(call.args.blocks ?? []).includes(step.stepId), { status: 502 });
    const takeBacks = { takeBack: async () => {} };
    const refreshes = createCardRefreshes({ store, messenger, takeBacks, logger, pause: async () => {} });
    await refreshes.redraw({ stepId: step.stepId, error: new Error('cant_update_message') });

    const cardsInThread = slack.messages(CHANNEL, threadTs).filter((message) => message.ts !== threadTs && JSON.stringify(message.blocks ?? []).includes(step.stepId));
    const notices = slack.messages(CHANNEL, threadTs).filter((message) => message.text.includes('posted again just above'));
    const recorded = (await store.getStep(step.stepId))?.cardTs;
    // Only one card was ever posted (the one Slack will not update); the thread must not be told a new
    // one is "just above", and the step's card must not be taken as updated.
    expect({ cards: cardsInThread.length, recordedIsTheOldCard: recorded === first, noticeSaysPostedAgain: notices.length }).toEqual({ cards: 1, recordedIsTheOldCard: true, noticeSaysPostedAgain: 0 });
  });

  it('is found when Slack did post it, and recorded in place of the old card', async () => {
    // Slack will not update the first card any more; the re-post lands, but its reply is a 502.
    const { slack, clientTo, logger, threadTs, step, store } = await startCardRepostScene({ cleanups });
    const edge = await startFlakySlackEdge(slack, { method: 'chat.postMessage', lost: 'bad-gateway', matches: (form) => (form.get('blocks') ?? '').includes('countersign_approve') });
    cleanups.push(() => edge.close());
    const messenger = createWebApiMessenger({ client: clientTo(edge.url), logger });
    const refreshes = createCardRefreshes({ store, messenger, takeBacks: { takeBack: async () => {} }, logger, pause: async () => {} });
    await refreshes.redraw({ stepId: step.stepId, error: new Error('cant_update_message') });

    const cards = slack.messages(CHANNEL, threadTs).filter((message) => message.ts !== threadTs && JSON.stringify(message.blocks ?? []).includes(step.stepId));
    const notices = slack.messages(CHANNEL, threadTs).filter((message) => message.text.includes('posted again just above'));
    expect({ cards: cards.length, recorded: (await store.getStep(step.stepId))?.cardTs, notices: notices.length }).toEqual({ cards: 2, recorded: cards[1]?.ts, notices: 1 });
  });
});
