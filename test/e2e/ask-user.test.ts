import { describe, expect, it } from 'vitest';
import { conversationOf } from '../helpers/fake-openai.js';
import { CHANNEL, cardButtons, nextTs, threadReplies, useHarnesses, waitFor } from './harness.js';

const harness = useHarnesses();

describe('ask_user: the human answers the tool call', () => {
  it('asks the requester with one button per option and gives the model the chosen answer', async () => {
    const h = await harness();
    h.openai.enqueue(
      { toolCalls: [{ name: 'ask_user', arguments: { question: 'Which namespace should I restart it in?', options: ['staging', 'prod'] } }] },
      { text: 'Going with prod.' },
    );
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'restart the worker', ts: threadTs });
    const card = await waitFor(() => threadReplies(h, threadTs).find((message) => cardButtons(message.blocks).length > 0), { message: 'question card' });
    expect(JSON.stringify(card.blocks)).toContain('Which namespace should I restart it in?');
    const options = cardButtons(card.blocks);
    expect(options.map((button) => button.actionId)).toEqual(['countersign_answer_0', 'countersign_answer_1', 'countersign_decline_question']);

    await h.click({ user: 'UBOB', cardTs: card.ts, threadTs, ...options[1]! });
    const refusal = await waitFor(() => h.slack.callsTo('chat.postEphemeral')[0], { message: 'ephemeral refusal' });
    expect(refusal.args.text).toContain('Only <@UALICE> can answer');
    await h.settled();
    expect(h.openai.requests).toHaveLength(1);

    await h.click({ user: 'UALICE', cardTs: card.ts, threadTs, ...options[1]! });
    await waitFor(() => threadReplies(h, threadTs).some((message) => message.text === 'Going with prod.'), { message: 'answer' });
    const result = conversationOf(h.openai.requests[1]!).find((message) => message.role === 'tool');
    expect(JSON.parse(result?.text ?? '{}')).toEqual({ answeredBy: '<@UALICE>', answer: 'prod' });
    const updated = h.slack.messages(CHANNEL, threadTs).find((message) => message.ts === card.ts)!;
    expect(JSON.stringify(updated.blocks)).toContain('Answered by <@UALICE>');
    expect(cardButtons(updated.blocks)).toEqual([]);

    await h.click({ user: 'UALICE', cardTs: card.ts, threadTs, ...options[0]! });
    await waitFor(() => h.slack.callsTo('chat.postEphemeral').length === 2, { message: 'second ephemeral' });
    expect(h.openai.requests).toHaveLength(2);
  });

  it('lets the requester decline the question, refuses anyone else privately, and tells the model it was declined', async () => {
    const h = await harness();
    h.openai.enqueue({ toolCalls: [{ name: 'ask_user', arguments: { question: 'Which namespace should I restart it in?' } }] }, { text: 'Understood, I will not restart it.' });
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'restart the worker', ts: threadTs });
    const card = await waitFor(() => threadReplies(h, threadTs).find((message) => cardButtons(message.blocks).length > 0), { message: 'question card' });
    const decline = cardButtons(card.blocks).find((button) => button.actionId === 'countersign_decline_question');
    expect(decline, 'the question card offers Decline next to Reply').toBeDefined();

    await h.click({ user: 'UBOB', cardTs: card.ts, threadTs, ...decline! });
    const refusal = await waitFor(() => h.slack.callsTo('chat.postEphemeral')[0], { message: 'ephemeral refusal' });
    expect(refusal.args.user).toBe('UBOB');
    expect(refusal.args.text).toContain('Only <@UALICE> can decline this question');
    await h.settled();
    expect(h.openai.requests).toHaveLength(1);

    await h.click({ user: 'UALICE', cardTs: card.ts, threadTs, ...decline! });
    await waitFor(() => threadReplies(h, threadTs).some((message) => message.text === 'Understood, I will not restart it.'), { message: 'reply after the decline' });
    const result = conversationOf(h.openai.requests[1]!).find((message) => message.role === 'tool');
    expect(result?.text).toContain('Declined by <@UALICE>');
    const updated = h.slack.messages(CHANNEL, threadTs).find((message) => message.ts === card.ts)!;
    expect(JSON.stringify(updated.blocks)).toContain('Declined by <@UALICE>');
    expect(cardButtons(updated.blocks)).toEqual([]);
  });

  it('waits for both the answer and the approval when one step asks and needs a countersignature', async () => {
    const h = await harness();
    h.openai.enqueue(
      {
        toolCalls: [
          { name: 'ask_user', arguments: { question: 'Also drain the queue first?', options: ['yes', 'no'] } },
          { name: 'restart_service', arguments: { service: 'worker', namespace: 'staging' } },
        ],
      },
      { text: 'Restarted; queue left alone.' },
    );
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'restart the worker', ts: threadTs });
    const card = await waitFor(() => threadReplies(h, threadTs).find((message) => cardButtons(message.blocks).length > 0), { message: 'card' });
    const button = (actionId: string) => cardButtons(card.blocks).find((candidate) => candidate.actionId === actionId)!;
    await h.click({ user: 'UBOB', cardTs: card.ts, threadTs, ...button('countersign_approve') });
    await h.settled();
    expect(h.openai.requests).toHaveLength(1);
    expect(h.invocations()).toEqual([]);

    await h.click({ user: 'UALICE', cardTs: card.ts, threadTs, ...button('countersign_answer_1') });
    await waitFor(() => threadReplies(h, threadTs).some((message) => message.text === 'Restarted; queue left alone.'), { message: 'answer' });
    expect(h.invocations()).toHaveLength(1);
    const tools = conversationOf(h.openai.requests[1]!).filter((message) => message.role === 'tool').map((message) => message.text ?? '');
    expect(tools.some((text) => text.includes('"answer":"no"'))).toBe(true);
    expect(tools.some((text) => text.includes('ok: rollout restart'))).toBe(true);
  });
});
