import { describe, expect, it } from 'vitest';
import { conversationOf } from '../helpers/fake-openai.js';
import { CHANNEL, cardButtons, nextTs, threadReplies, useHarnesses, waitFor, type Harness } from './harness.js';

const harness = useHarnesses();

async function pausedOn(h: Harness, call: { name: string; arguments: Record<string, unknown> }, then: string) {
  h.openai.enqueue({ toolCalls: [call] }, { text: then });
  const threadTs = nextTs();
  await h.mention({ user: 'UALICE', text: 'please do it', ts: threadTs });
  const card = await waitFor(() => threadReplies(h, threadTs).find((message) => cardButtons(message.blocks).length > 0), { message: 'card' });
  const button = (actionId: string) => cardButtons(card.blocks).find((candidate) => candidate.actionId === actionId);
  return { threadTs, card, button };
}

async function openedView(h: Harness, count: number) {
  const call = await waitFor(() => h.slack.callsTo('views.open')[count - 1], { message: 'views.open' });
  return call.args.view as { callback_id: string; private_metadata: string; blocks: any[] };
}

describe('deny with a reason', () => {
  it('passes the reason to the model and shows it on the card', async () => {
    const h = await harness();
    const { threadTs, card, button } = await pausedOn(h, { name: 'restart_service', arguments: { service: 'api', namespace: 'prod' } }, 'Understood.');
    await h.click({ user: 'UBOB', cardTs: card.ts, threadTs, ...button('countersign_deny_reason')! });
    const view = await openedView(h, 1);
    expect(view.callback_id).toBe('countersign_deny_reason');

    const response = await h.submitView({ user: 'UBOB', view, values: { reason: { value: { type: 'plain_text_input', value: 'prod is frozen until Monday' } } } });
    expect(response.status).toBe(200);
    await waitFor(() => threadReplies(h, threadTs).some((message) => message.text === 'Understood.'), { message: 'answer' });
    expect(conversationOf(h.openai.requests[1]!).find((message) => message.role === 'tool')?.text).toContain('prod is frozen until Monday');
    const updated = h.slack.messages(CHANNEL, threadTs).find((message) => message.ts === card.ts)!;
    expect(JSON.stringify(updated.blocks)).toContain('Reason: prod is frozen until Monday');
    await h.settled();
    expect(h.invocations()).toEqual([]);
  });

  it('shows "already approved" in the form when someone approved first, and changes nothing', async () => {
    const h = await harness();
    const { threadTs, card, button } = await pausedOn(h, { name: 'restart_service', arguments: { service: 'api', namespace: 'prod' } }, 'Done.');
    await h.click({ user: 'UBOB', cardTs: card.ts, threadTs, ...button('countersign_deny_reason')! });
    const view = await openedView(h, 1);
    await h.click({ user: 'UCAROL', cardTs: card.ts, threadTs, ...button('countersign_approve')! });
    await waitFor(() => threadReplies(h, threadTs).some((message) => message.text === 'Done.'), { message: 'answer' });

    const response = await h.submitView({ user: 'UBOB', view, values: { reason: { value: { type: 'plain_text_input', value: 'no' } } } });
    const body = (await response.json()) as { response_action: string; errors: Record<string, string> };
    expect(body.response_action).toBe('errors');
    expect(body.errors.reason).toContain('Already approved by <@UCAROL>');
    expect(h.invocations()).toHaveLength(1);
  });
});

describe('view full input', () => {
  it('offers the whole input when the card had to cut it', async () => {
    const h = await harness();
    const service = `svc-${'a'.repeat(3000)}`;
    const { threadTs, card, button } = await pausedOn(h, { name: 'restart_service', arguments: { service, namespace: 'prod' } }, 'ok');
    expect(JSON.stringify(card.blocks)).toContain('truncated');
    await h.click({ user: 'UBOB', cardTs: card.ts, threadTs, ...button('countersign_view_input')! });
    const view = await openedView(h, 1);
    const shown = view.blocks.map((block) => block.text?.text ?? '').join('');
    expect(shown.replaceAll(/[^a]/g, '').length).toBeGreaterThanOrEqual(3000);
  });
});
