import { describe, expect, it } from 'vitest';
import { conversationOf } from '../helpers/fake-openai.js';
import { cardButtons, nextTs, threadReplies, useHarnesses, waitFor } from './harness.js';

const harness = useHarnesses();
const restart = (service: string) => ({ name: 'restart_service', arguments: { service, namespace: 'staging' } });

describe('a step with more calls than one card holds (MAX_CALLS_PER_CARD = 10)', () => {
  it('tells the model the calls past the limit were closed by countersign, not declined by a person', async () => {
    const h = await harness();
    const services = Array.from({ length: 12 }, (_, index) => `svc-${index}`);
    h.openai.enqueue({ toolCalls: services.map(restart) }, { text: 'Restarted ten of them.' });
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'restart all twelve', ts: threadTs });
    const card = await waitFor(() => threadReplies(h, threadTs).find((message) => cardButtons(message.blocks).length > 0), { message: 'the card' });
    for (const approve of cardButtons(card.blocks).filter((button) => button.actionId === 'countersign_approve')) {
      await h.click({ user: 'UBOB', cardTs: card.ts, threadTs, ...approve });
    }
    await waitFor(() => threadReplies(h, threadTs).some((message) => message.text === 'Restarted ten of them.'), { message: 'the answer' });
    await h.settled();
    expect(h.invocations()).toHaveLength(10);
    const overflow = conversationOf(h.openai.requests.at(-1)!)
      .filter((message) => message.role === 'tool')
      .map((message) => message.text)
      .filter((text): text is string => text?.includes('at most 10 calls') === true);
    expect(overflow).toHaveLength(2);
    // Nobody declined these two: the bot's own user id is not a person, and the model is told to ask for them separately.
    for (const text of overflow) {
      expect(text).not.toContain('This is a human decision');
      expect(text).not.toContain('do not retry this call');
    }
  });
});
