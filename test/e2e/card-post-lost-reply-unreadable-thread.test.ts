import { afterEach, describe, expect, it } from 'vitest';
import { startFakeSlackApi } from '../helpers/fake-slack-api.js';
import { FAST_KEPT_RETRIES } from '../helpers/fast-kept-retries.js';
import { startFlakySlackEdge } from '../helpers/flaky-slack-edge.js';
import { BOT_USER_ID, CHANNEL, TEAM_ID, cardButtons, nextTs, useHarnesses, waitFor } from './harness.js';

/**
 * A request's FIRST card, posted by Slack though its reply was lost (a 502), while the thread could not
 * be read to look for it (the same outage): the step was closed as "could not post the approval card",
 * and the card Slack did post stood in the thread with live buttons whose Approve was refused. As a card
 * posted again whose reply was lost (card-repost-lost-reply-unreadable-thread), the request stays open and
 * the sweep looks for its card once the thread can be read, then records it.
 */

const closeAfter: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closeAfter.splice(0).reverse()) await close();
});
const harness = useHarnesses();

describe("a request's first card posted though its reply was lost, while the thread cannot be read", () => {
  it('stays open: Approve on the card runs the call once, and the card is recorded and shown decided once the thread can be read', async () => {
    const slack = await startFakeSlackApi({ botUserId: BOT_USER_ID, teamId: TEAM_ID });
    closeAfter.push(() => slack.close());
    // The card's post lands in Slack, but its reply is lost.
    const edge = await startFlakySlackEdge(slack, { method: 'chat.postMessage', lost: 'bad-gateway', matches: (form) => (form.get('blocks') ?? '').includes('countersign_approve') });
    closeAfter.push(() => edge.close());
    // The outage: the thread cannot be read for the lost card.
    slack.failWhen('conversations.replies', () => true, { status: 503 });
    const h = await harness({ environment: { SLACK_API_URL: edge.url }, sweepIntervalMs: 100, keptRetries: FAST_KEPT_RETRIES, slackRetryConfig: { retries: 0 } });
    h.openai.enqueue({ toolCalls: [{ name: 'restart_service', arguments: { service: 'api', namespace: 'prod' } }] });
    h.openai.enqueue({ text: 'Restarted api.' });
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'restart api', ts: threadTs });
    await h.settled();

    const replies = () => slack.messages(CHANNEL, threadTs).filter((message) => message.ts !== threadTs);
    const card = replies().find((message) => cardButtons(message.blocks).some((button) => button.actionId === 'countersign_approve'));
    expect(card, 'Slack posted the card').toBeDefined();
    const approve = cardButtons(card!.blocks).find((button) => button.actionId === 'countersign_approve')!;

    // Still in the outage, an approver clicks Approve on the card they see.
    await h.click({ user: 'UBOB', cardTs: card!.ts, threadTs, ...approve });
    await h.settled();
    const notice = replies().find((message) => message.text.includes('could not post the approval card'));
    const refused = slack.callsTo('chat.postEphemeral').map((call) => String(call.args.text));
    expect({ notice: notice?.text, refused, ran: h.invocations().length }).toEqual({ notice: undefined, refused: [], ran: 1 });

    // The thread can be read again: the sweep finds the card, records it and draws it decided.
    slack.failWhen('conversations.replies', undefined);
    await waitFor(() => replies().some((message) => message.text === 'Restarted api.'), { message: 'the answer' });
    await waitFor(
      () => {
        const shown = slack.messages(CHANNEL, threadTs).find((message) => message.ts === card!.ts)!;
        return !cardButtons(shown.blocks).some((button) => button.actionId === 'countersign_approve');
      },
      { timeoutMs: 15_000, message: 'the card drawn decided' },
    );
    await h.settled();
    expect(h.invocations()).toHaveLength(1);
    expect(replies().filter((message) => cardButtons(message.blocks).some((button) => button.actionId === 'countersign_approve'))).toEqual([]);
  });
});
