import { describe, expect, it } from 'vitest';
import { fillForm } from './fill-form.js';
import { CHANNEL, cardButtons, nextTs, threadReplies, useHarnesses, waitFor } from './harness.js';

/**
 * Review (expiry): an Edit form opened before the request expired and submitted after it is refused
 * ("This request expired before you acted…"), as it should be, but the refusal is given to Slack
 * only after `refuse()` has awaited `expireNow`, which commits the expiry AND updates the card and
 * every copy through Slack (`showStep`: one `chat.update` each) before returning. A form submit's
 * answer is due within Slack's 3 s (decide-call.ts: "a form's submit cannot [wait]"; the front thread
 * gives up at 3 s with a 504); a slow or rate-limited `chat.update` makes the editor's form fail with
 * Slack's generic error instead of saying the request expired. (Also the Reply form of a scheduled
 * turn's question answered after its expiry.)
 *
 * Here the card's `chat.update` is held: the form's answer must not wait for it.
 */
const harness = useHarnesses();
const POLICY = `
policy:
  rules:
    - name: restarts
      tools: [restart_service]
      expiry: 2m
`;

describe('an Edit submitted after the request expired', () => {
  it("is answered within Slack's 3 s, whatever Slack's chat.update is doing", async () => {
    const requestedAt = Date.UTC(2026, 10, 21, 12, 0);
    const clock = { now: requestedAt };
    const h = await harness({ extraYaml: POLICY, now: () => clock.now, sweepIntervalMs: 3_600_000 });
    h.openai.enqueue({ toolCalls: [{ name: 'restart_service', arguments: { service: 'worker', namespace: 'staging' } }] }, { text: 'Restarted.' });
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'restart the worker', ts: threadTs });
    const card = await waitFor(() => threadReplies(h, threadTs).find((message) => cardButtons(message.blocks).length > 0), { message: 'card' });
    await h.settled();

    // Bob opens the form while the request is open…
    const edit = cardButtons(card.blocks).find((button) => button.actionId === 'countersign_edit')!;
    await h.click({ user: 'UBOB', cardTs: card.ts, threadTs, ...edit });
    const view = (await waitFor(() => h.slack.callsTo('views.open')[0], { message: 'edit form' })).args.view;

    // …and submits it after the 2-minute deadline, while Slack is slow to update messages.
    clock.now = requestedAt + 3 * 60_000;
    const held = h.slack.holdNext('chat.update');
    const submitted = h.submitView({ user: 'UBOB', view, values: fillForm(view, { Namespace: 'prod' }) }).then(async (response) => ({ status: response.status, body: await response.text() }));
    const answer = await Promise.race([submitted, new Promise<'no answer within 3 s'>((resolve) => setTimeout(() => resolve('no answer within 3 s'), 3_000))]);
    // The expiry the refusal set off is written, its card update still held.
    await held.received;
    const expiredWhileHeld = (await h.auditEvents()).some((event) => event.type === 'expired');
    held.release();
    await submitted;
    await h.settled();
    expect(typeof answer === 'string' ? answer : { status: answer.status, refusedAsExpired: answer.body.includes('expired before you acted') }).toEqual({ status: 200, refusedAsExpired: true });
    // …and, once Slack answers, the card says so.
    const shown = JSON.stringify(h.slack.messages(CHANNEL, threadTs).find((message) => message.ts === card.ts)!.blocks);
    const refusals = (await h.auditEvents()).filter((event) => event.type === 'action-refused').map((event) => ({ action: event.action, code: event.code }));
    expect({ expiredWhileHeld, cardSaysExpired: shown.includes('Expired without a decision'), refusals }).toEqual({ expiredWhileHeld: true, cardSaysExpired: true, refusals: [{ action: 'edit', code: 'expired' }] });
  });
});
