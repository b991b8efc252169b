import { describe, expect, it } from 'vitest';
import { fillForm } from './fill-form.js';
import { cardButtons, nextTs, threadReplies, useHarnesses, waitFor } from './harness.js';

const harness = useHarnesses();

/**
 * README, Audit trail: "Every ... decision (who, when, original and edited input, reason, quorum)".
 * An answer is the human's input to the turn (it counts as steering under four-eyes, as a deny
 * reason does, and a deny reason is recorded). The `decision` record of an answered question carries
 * the question (`originalInput`) but not the answer: nothing in the trail says what the person
 * told the model, so an auditor cannot see why the model then asked to restart payments-db in prod.
 */
describe('ask_user: the answer is in the audit trail', () => {
  it('records what the person answered in the decision event', async () => {
    const h = await harness();
    h.openai.enqueue({ toolCalls: [{ name: 'ask_user', arguments: { question: 'What should I do about the stuck queue?' } }] }, { text: 'OK.' });
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'the queue is stuck', ts: threadTs });
    const card = await waitFor(() => threadReplies(h, threadTs).find((message) => cardButtons(message.blocks).some((b) => b.actionId === 'countersign_reply')), { message: 'the question' });
    await h.click({ user: 'UALICE', cardTs: card.ts, threadTs, ...cardButtons(card.blocks).find((b) => b.actionId === 'countersign_reply')! });
    const view = (await waitFor(() => h.slack.callsTo('views.open')[0], { message: 'the Reply form' })).args.view;
    const answer = 'Restart payments-db in prod, skip the drain';
    const response = await h.submitView({ user: 'UALICE', view, values: fillForm(view, { Answer: answer }) });
    expect(await response.text()).not.toContain('"response_action":"errors"');
    await waitFor(() => threadReplies(h, threadTs).some((message) => message.text === 'OK.'), { message: 'the turn resumed' });
    await h.settled();

    const decisions = (await h.auditEvents()).filter((event) => event.type === 'decision' && event.toolName === 'ask_user');
    expect(decisions).toMatchObject([{ outcome: 'answered', userId: 'UALICE' }]);
    expect(JSON.stringify(decisions[0]), 'the decision record does not say what was answered').toContain(answer);
  });
});
