import { describe, expect, it } from 'vitest';
import { CHANNEL, cardButtons, nextTs, threadReplies, useHarnesses, waitFor, type Harness } from './harness.js';

const harness = useHarnesses();

/**
 * README (Grants): "A grant is also only as wide as its grantor's approval could be now", and a
 * `channel` approver is "anyone of your organisation in the channel" (the default approvers). App
 * Home already refuses a click from someone no longer in the request's channel, and lets only people
 * in a grant's channel revoke someone else's grant there. The grant itself is never checked against
 * its grantor's channel membership: Bob, removed from #ops, could not approve Alice's restart any
 * more, yet his channel grant keeps running her restarts there without a card until it expires.
 */
async function ask(h: Harness, answer: string) {
  h.openai.enqueue({ toolCalls: [{ name: 'restart_service', arguments: { service: 'worker', namespace: 'staging' } }] }, { text: answer });
  const threadTs = nextTs();
  await h.mention({ user: 'UALICE', text: 'restart the worker', ts: threadTs });
  const outcome = await waitFor(() => threadReplies(h, threadTs).find((message) => message.text === answer) ?? threadReplies(h, threadTs).find((message) => cardButtons(message.blocks).length > 0), { message: 'card or answer' });
  return { threadTs, card: cardButtons(outcome.blocks).length > 0 ? outcome : undefined };
}

describe('a channel grant whose grantor has left the channel', () => {
  it('no longer lets calls run without a card', async () => {
    const h = await harness();
    h.slack.setChannelMembers(CHANNEL, ['UALICE', 'UBOB', 'UCAROL']);
    const first = await ask(h, 'granted');
    const button = cardButtons(first.card!.blocks).find((candidate) => candidate.actionId === 'countersign_grant')!;
    await h.click({ user: 'UBOB', cardTs: first.card!.ts, threadTs: first.threadTs, ...button });
    const view = (await waitFor(() => h.slack.callsTo('views.open')[0], { message: 'grant form' })).args.view;
    const option = (value: string) => ({ text: { type: 'plain_text', text: value }, value });
    await h.submitView({
      user: 'UBOB',
      view,
      values: {
        scope: { value: { type: 'radio_buttons', selected_option: option('channel') } },
        duration: { value: { type: 'static_select', selected_option: option('24') } },
        identical: { value: { type: 'checkboxes', selected_options: [] } },
      },
    });
    await waitFor(() => threadReplies(h, first.threadTs).some((message) => message.text === 'granted'), { message: 'first answer' });
    expect(h.invocations()).toHaveLength(1);

    // Bob is removed from #ops: he can no longer see or click its cards.
    h.slack.setChannelMembers(CHANNEL, ['UALICE', 'UCAROL']);
    const later = await ask(h, 'ran on a grant from someone outside the channel');
    expect(later.card).toBeDefined();
    expect(h.invocations()).toHaveLength(1);
  });
});
