import { describe, expect, it } from 'vitest';
import { fillForm } from './fill-form.js';
import { cardButtons, nextTs, threadReplies, useHarnesses, waitFor } from './harness.js';

/**
 * A form submit that claims the thread's channel asks Slack which channels the person is in
 * (`formChannel` → `users.conversations`) before it answers the submit. Slack waits 3 s for that
 * answer; past it the person sees Slack's own "We had some trouble connecting" in the form, no
 * reason (Bolt's inline receiver answers 404 at 3001 ms, the Slack front thread 504 at 3000 ms).
 * When `users.conversations` is rate-limited (Tier 3) or slow, the submit must still be answered
 * within 3 s, with the clear fail-closed "Could not check which channels you are in just now".
 * Otherwise the person is shown a failure while the decision may still land afterwards, once
 * the Web API client's retries get through.
 */
const harness = useHarnesses();
const SLACK_ACK_DEADLINE_MS = 3_000;
const CHANNELS_UNKNOWN = 'Could not check which channels you are in just now';

const POLICY = `
policy:
  rules:
    - name: anyone in ops
      tools: [restart_service]
      approvers: [channel]
      allowSelfApproval: false
`;

async function answerOf(response: Response, startedAt: number) {
  const body = await response.text();
  const errors = body === '' ? {} : ((JSON.parse(body) as { errors?: Record<string, string> }).errors ?? {});
  return { status: response.status, tookMs: Date.now() - startedAt, errors: Object.values(errors) };
}

async function openForm(h: Awaited<ReturnType<ReturnType<typeof useHarnesses>>>, actionId: string) {
  h.openai.enqueue({ toolCalls: [{ name: 'restart_service', arguments: { service: 'worker', namespace: 'prod' } }] }, { text: 'Restarted.' });
  const threadTs = nextTs();
  await h.mention({ user: 'UALICE', text: 'restart the worker in prod', ts: threadTs });
  const card = await waitFor(() => threadReplies(h, threadTs).find((message) => cardButtons(message.blocks).some((b) => b.actionId === actionId)), { message: 'the card' });
  await h.click({ user: 'UBOB', cardTs: card.ts, threadTs, ...cardButtons(card.blocks).find((b) => b.actionId === actionId)! });
  return (await waitFor(() => h.slack.callsTo('views.open')[0], { message: 'the form' })).args.view;
}

describe('a form submit while Slack is slow to say who is in the channel', () => {
  it('rate-limited users.conversations (429, Retry-After 2 s): answered within 3 s, saying the channels could not be checked', async () => {
    const h = await harness({ extraYaml: POLICY });
    const view = await openForm(h, 'countersign_edit');

    h.slack.failWhen('users.conversations', () => true, { status: 429, retryAfterSeconds: 2 });
    const startedAt = Date.now();
    const answer = await answerOf(await h.submitView({ user: 'UBOB', view, values: fillForm(view, { Namespace: 'staging' }) }), startedAt);
    // The refusal the listener computes once the client gives up (after its retries): never shown.
    await h.settled({ timeoutMs: 30_000 });
    expect(h.invocations()).toEqual([]);
    expect(answer).toEqual({ status: 200, tookMs: expect.any(Number), errors: [expect.stringContaining(CHANNELS_UNKNOWN)] });
    expect(answer.tookMs).toBeLessThan(SLACK_ACK_DEADLINE_MS);
  }, 60_000);

  it('users.conversations that hangs: answered within 3 s, and a grant the person was told failed is not created behind their back', async () => {
    const h = await harness({ extraYaml: POLICY });
    const view = await openForm(h, 'countersign_grant');

    const held = h.slack.holdNext('users.conversations');
    const startedAt = Date.now();
    const submitted = h.submitView({ user: 'UBOB', view, values: fillForm(view, {}) });
    await held.received;
    // Slack gives up on the submit after 3 s; the answer has come by then or it never counts.
    const answer = await answerOf(await submitted, startedAt);
    held.release();
    // Barrier: everything the submit set off has finished (or the bot is stuck holding the thread).
    let stuck: string | undefined;
    await h.settled({ timeoutMs: 40_000 }).catch((error: unknown) => {
      stuck = String(error);
    });
    const grants = (await h.auditEvents()).filter((event) => event.type === 'grant-created');
    const card = h.slack.messages('C0OPS0001').find((message) => message.text?.startsWith('Approval needed'));
    expect({ answer, grants: grants.length, ran: h.invocations(), stuck, cardStillHasButtons: cardButtons(card?.blocks).length > 0 }).toEqual({
      answer: { status: 200, tookMs: expect.any(Number), errors: [expect.stringContaining(CHANNELS_UNKNOWN)] },
      grants: 0,
      ran: [],
      stuck: undefined,
      cardStillHasButtons: true,
    });
    expect(answer.tookMs).toBeLessThan(SLACK_ACK_DEADLINE_MS);
  }, 90_000);
  it('a 429 on another thread\'s post (the client pauses every call for Retry-After): the submit is still answered within 3 s', async () => {
    const h = await harness({ extraYaml: POLICY });
    const view = await openForm(h, 'countersign_edit');

    // Another thread's answer is rate-limited (chat.postMessage is 1/s per channel): Retry-After 5 s.
    h.slack.failNext('chat.postMessage', { status: 429, retryAfterSeconds: 5 });
    h.openai.enqueue({ text: 'The cluster has 3 nodes.' });
    const otherTs = nextTs();
    await h.mention({ user: 'UCAROL', text: 'how many nodes?', ts: otherTs });
    await waitFor(() => h.slack.calls.find((call) => call.method === 'chat.postMessage' && call.args.thread_ts === otherTs), { message: 'the rate-limited post' });

    const startedAt = Date.now();
    const answer = await answerOf(await h.submitView({ user: 'UBOB', view, values: fillForm(view, { Namespace: 'staging' }) }), startedAt);
    // The other thread's answer gets through once the pause is over (the model's replies are taken in order, whichever thread asks).
    await waitFor(() => threadReplies(h, otherTs).length > 0, { message: 'the other thread\'s answer', timeoutMs: 20_000 });
    await h.settled({ timeoutMs: 40_000 });
    expect({ status: answer.status, answeredInTime: answer.tookMs < SLACK_ACK_DEADLINE_MS }).toEqual({ status: 200, answeredInTime: true });
  }, 90_000);
});
