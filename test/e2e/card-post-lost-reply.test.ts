import { afterEach, describe, expect, it } from 'vitest';
import { startFakeSlackApi } from '../helpers/fake-slack-api.js';
import { startFlakySlackEdge, type LostReply } from '../helpers/flaky-slack-edge.js';
import { BOT_USER_ID, CHANNEL, TEAM_ID, cardButtons, nextTs, useHarnesses, waitFor } from './harness.js';

const closeAfter: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closeAfter.splice(0).reverse()) await close();
});
const harness = useHarnesses();

describe('an approval card Slack posted but whose reply was lost', () => {
  it.each<LostReply>(['bad-gateway', 'dropped', 'internal-error'])('stands as the request\'s card, decidable, with no "could not post the approval card" notice beside it (%s)', async (lost) => {
    const slack = await startFakeSlackApi({ botUserId: BOT_USER_ID, teamId: TEAM_ID });
    closeAfter.push(() => slack.close());
    // The card's post lands in Slack, but its reply is lost.
    const edge = await startFlakySlackEdge(slack, {
      method: 'chat.postMessage',
      lost,
      matches: (form) => (form.get('blocks') ?? '').includes('countersign_approve'),
    });
    closeAfter.push(() => edge.close());
    const h = await harness({ environment: { SLACK_API_URL: edge.url } });
    h.openai.enqueue({ toolCalls: [{ name: 'restart_service', arguments: { service: 'api', namespace: 'prod' } }] });
    h.openai.enqueue({ text: 'Restarted api.' });
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'restart api', ts: threadTs });
    await h.settled();

    const replies = () => slack.messages(CHANNEL, threadTs).filter((message) => message.ts !== threadTs);
    const liveCards = replies().filter((message) => cardButtons(message.blocks).some((button) => button.actionId === 'countersign_approve'));
    const notice = replies().find((message) => message.text.includes('could not post the approval card'));
    // Never a card with live Approve/Deny buttons beside a notice that says it could not be posted.
    expect({ notice: notice?.text, liveCards: liveCards.length }).toEqual({ notice: undefined, liveCards: 1 });

    // The card found in the thread is the step's: a click on it decides, and the card shows it.
    const [card] = liveCards;
    const approve = cardButtons(card!.blocks).find((button) => button.actionId === 'countersign_approve')!;
    await h.click({ user: 'UBOB', cardTs: card!.ts, threadTs, ...approve });
    await waitFor(() => replies().some((message) => message.text === 'Restarted api.'), { message: 'the answer' });
    await h.settled();
    expect(h.invocations()).toHaveLength(1);
    const shown = slack.messages(CHANNEL, threadTs).find((message) => message.ts === card!.ts)!;
    expect(cardButtons(shown.blocks).map((button) => button.actionId)).not.toContain('countersign_approve');
  });
});
