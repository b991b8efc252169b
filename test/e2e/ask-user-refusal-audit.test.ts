import { describe, expect, it } from 'vitest';
import { cardButtons, nextTs, threadReplies, useHarnesses, waitFor } from './harness.js';

const harness = useHarnesses();

/**
 * README, Guarantees: "A refused action changes nothing, gets a private explanation and an
 * `action-refused` audit record" (answer and decline named among them). A click on Approve that is
 * refused is recorded on every path (the decider's `refuse`). On a question, two refusals are only
 * told privately: an option clicked on a question already answered (answer-question.ts returns on
 * `!lookup.open` before the decider), and Reply clicked by someone who may not answer
 * (reply-question.ts's `view` returns a sentence, which `registerCallModalButton` tells without
 * its `refusalAudit`).
 */
describe('ask_user: refused clicks are audited', () => {
  it('records a second answer to an answered question as refused', async () => {
    const h = await harness();
    h.openai.enqueue({ toolCalls: [{ name: 'ask_user', arguments: { question: 'Which namespace?', options: ['staging', 'prod'] } }] }, { text: 'Going with prod.' });
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'restart the worker', ts: threadTs });
    const card = await waitFor(() => threadReplies(h, threadTs).find((message) => cardButtons(message.blocks).length > 0), { message: 'question card' });
    const [staging, prod] = cardButtons(card.blocks);
    await h.click({ user: 'UALICE', cardTs: card.ts, threadTs, ...prod! });
    await waitFor(() => threadReplies(h, threadTs).some((message) => message.text === 'Going with prod.'), { message: 'answer' });

    await h.click({ user: 'UBOB', cardTs: card.ts, threadTs, ...staging! });
    const refusal = await waitFor(() => h.slack.callsTo('chat.postEphemeral').find((call) => call.args.user === 'UBOB'), { message: 'the refusal' });
    // Now the decider's refusal, as a late Approve gets ("Already answered by <@UALICE>, …").
    expect(refusal.args.text).toMatch(/already (decided|answered) by <@UALICE>/i);
    await h.settled();
    const refused = (await h.auditEvents()).filter((event) => event.type === 'action-refused' && event.userId === 'UBOB');
    expect(refused, 'the refused answer left no audit record').toMatchObject([{ action: 'answer' }]);
  });

  it('records Reply clicked by someone who may not answer as refused', async () => {
    const h = await harness();
    h.openai.enqueue({ toolCalls: [{ name: 'ask_user', arguments: { question: 'Which namespace?' } }] });
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'restart the worker', ts: threadTs });
    const card = await waitFor(() => threadReplies(h, threadTs).find((message) => cardButtons(message.blocks).length > 0), { message: 'question card' });
    await h.click({ user: 'UBOB', cardTs: card.ts, threadTs, ...cardButtons(card.blocks).find((b) => b.actionId === 'countersign_reply')! });
    const refusal = await waitFor(() => h.slack.callsTo('chat.postEphemeral').find((call) => call.args.user === 'UBOB'), { message: 'the refusal' });
    expect(refusal.args.text).toContain('Only <@UALICE> can answer');
    await h.settled();
    const refused = (await h.auditEvents()).filter((event) => event.type === 'action-refused' && event.userId === 'UBOB');
    expect(refused, 'the refused Reply left no audit record').toMatchObject([{ action: 'answer' }]);
  });
});
