import { describe, expect, it } from 'vitest';
import { createManualScheduleClock } from '../helpers/manual-schedule-clock.js';
import { fillForm } from './fill-form.js';
import { CHANNEL, cardButtons, nextTs, threadReplies, useHarnesses, waitFor, type Harness } from './harness.js';

const harness = useHarnesses();
const START = Date.UTC(2026, 10, 25, 12, 7);
const FIRST_FIRING = Date.UTC(2026, 10, 25, 12, 15);

/** Four eyes on prod restarts: anyone in the channel, but never the person who asked. */
const CONFIG = `
policy:
  rules:
    - name: four eyes
      tools: [restart_service]
      approvers: [channel]
      allowSelfApproval: false
schedules:
  - name: heartbeat
    cron: '*/15 * * * *'
    channel: ${CHANNEL}
    prompt: Check the pods; ask the channel what to do about anything stuck.
`;
const scheduledPosts = (h: Harness) => h.slack.messages(CHANNEL).filter((message) => message.thread_ts === undefined || message.thread_ts === message.ts).filter((message) => message.text.includes('Scheduled: *heartbeat*'));
const restart = { toolCalls: [{ name: 'restart_service', arguments: { service: 'worker', namespace: 'prod' } }] };

describe('self-approval in a scheduled thread', () => {
  it('control: Alice cannot approve the prod restart she asked for herself', async () => {
    const h = await harness({ extraYaml: CONFIG, scheduleClock: createManualScheduleClock(START) });
    h.openai.enqueue(restart, { text: 'Restarted.' });
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'restart the worker in prod', ts: threadTs });
    const card = await waitFor(() => threadReplies(h, threadTs).find((message) => cardButtons(message.blocks).some((b) => b.actionId === 'countersign_approve')), { message: 'the card' });
    await h.click({ user: 'UALICE', cardTs: card.ts, threadTs, ...cardButtons(card.blocks).find((b) => b.actionId === 'countersign_approve')! });
    await h.settled();
    expect(h.invocations()).toEqual([]);
  });

  it('Alice cannot approve a prod restart she asked for through her answer to the schedule’s question', async () => {
    const clock = createManualScheduleClock(START);
    const h = await harness({ extraYaml: CONFIG, scheduleClock: clock });
    const answerSchema = { type: 'object', properties: { action: { type: 'string' } }, required: ['action'] };
    h.openai.enqueue({ toolCalls: [{ name: 'ask_user', arguments: { question: 'worker is stuck in prod. What should I do?', answerSchema } }] }, restart, { text: 'Restarted.' });
    await clock.advanceTo(FIRST_FIRING);
    const [post] = await waitFor(() => (scheduledPosts(h).length > 0 ? scheduledPosts(h) : undefined), { message: 'the scheduled post' });
    const threadTs = post!.ts;
    const question = await waitFor(() => threadReplies(h, threadTs).find((message) => cardButtons(message.blocks).some((b) => b.actionId === 'countersign_reply')), { message: 'the question' });
    await h.click({ user: 'UALICE', cardTs: question.ts, threadTs, ...cardButtons(question.blocks).find((b) => b.actionId === 'countersign_reply')! });
    const view = (await waitFor(() => h.slack.callsTo('views.open')[0], { message: 'the Reply form' })).args.view;
    await h.submitView({ user: 'UALICE', view, values: fillForm(view, { Action: 'restart the worker in prod' }) });
    const card = await waitFor(() => threadReplies(h, threadTs).find((message) => cardButtons(message.blocks).some((b) => b.actionId === 'countersign_approve')), { message: 'the restart card' });
    await h.click({ user: 'UALICE', cardTs: card.ts, threadTs, ...cardButtons(card.blocks).find((b) => b.actionId === 'countersign_approve')! });
    await h.settled();
    // The restart Alice dictated must not run on Alice's approval alone: a second person has to see it.
    expect(h.invocations()).toEqual([]);
    const refusal = await waitFor(() => h.slack.callsTo('chat.postEphemeral').find((call) => call.args.user === 'UALICE'), { message: 'the refusal' });
    expect(refusal.args.text).toContain('You wrote the answer or deny reason that led to this request, and this rule needs someone else to approve it');

    await h.click({ user: 'UBOB', cardTs: card.ts, threadTs, ...cardButtons(card.blocks).find((b) => b.actionId === 'countersign_approve')! });
    await waitFor(() => threadReplies(h, threadTs).some((message) => message.text === 'Restarted.'), { message: 'the answer after Bob approved' });
    expect(h.invocations()).toEqual([['rollout', 'restart', 'deployment/worker', '-n', 'prod']]);
  });

  it('counts her answer for that turn only: a restart Bob then asks for in the thread, Alice may approve', async () => {
    const clock = createManualScheduleClock(START);
    const h = await harness({ extraYaml: CONFIG, scheduleClock: clock });
    h.openai.enqueue({ toolCalls: [{ name: 'ask_user', arguments: { question: 'worker is stuck in prod. What should I do?', options: ['wait', 'restart it'] } }] }, { text: 'Waiting.' }, restart, { text: 'Restarted.' });
    await clock.advanceTo(FIRST_FIRING);
    const [post] = await waitFor(() => (scheduledPosts(h).length > 0 ? scheduledPosts(h) : undefined), { message: 'the scheduled post' });
    const threadTs = post!.ts;
    const question = await waitFor(() => threadReplies(h, threadTs).find((message) => cardButtons(message.blocks).length > 0), { message: 'the question' });
    await h.click({ user: 'UALICE', cardTs: question.ts, threadTs, ...cardButtons(question.blocks)[0]! });
    await waitFor(() => threadReplies(h, threadTs).some((message) => message.text === 'Waiting.'), { message: 'the scheduled turn’s answer' });

    await h.mention({ user: 'UBOB', text: 'restart the worker in prod', ts: nextTs(), threadTs });
    const card = await waitFor(() => threadReplies(h, threadTs).find((message) => cardButtons(message.blocks).some((b) => b.actionId === 'countersign_approve')), { message: 'the restart card' });
    await h.click({ user: 'UALICE', cardTs: card.ts, threadTs, ...cardButtons(card.blocks).find((b) => b.actionId === 'countersign_approve')! });
    await waitFor(() => threadReplies(h, threadTs).some((message) => message.text === 'Restarted.'), { message: 'the answer after Alice approved' });
    expect(h.invocations()).toEqual([['rollout', 'restart', 'deployment/worker', '-n', 'prod']]);
  });
});
