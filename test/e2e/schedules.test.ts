import { describe, expect, it } from 'vitest';
import { conversationOf } from '../helpers/fake-openai.js';
import { createManualScheduleClock } from '../helpers/manual-schedule-clock.js';
import { fillForm } from './fill-form.js';
import { CHANNEL, cardButtons, startHarness, TEAM_ID, threadReplies, useHarnesses, waitFor, type Harness } from './harness.js';

const harness = useHarnesses();

const START = Date.UTC(2026, 10, 25, 12, 7);
const FIRST_FIRING = Date.UTC(2026, 10, 25, 12, 15);

/** get_pods needs approval by policy here; the schedule lets it run, restart_service still waits. */
const SCHEDULE = `
policy:
  rules:
    - tools: [get_pods, restart_service]
      approval: always
schedules:
  - name: heartbeat
    cron: '*/15 * * * *'
    channel: ${CHANNEL}
    prompt: Check the pods and restart anything stuck.
    autoApprove: [get_pods]
`;

const scheduledPosts = (h: Harness) => h.slack.messages(CHANNEL).filter((message) => message.thread_ts === undefined || message.thread_ts === message.ts).filter((message) => message.text.includes('Scheduled: *heartbeat*'));

describe('scheduled turns', () => {
  it('runs each firing once across two bot processes, in a new thread, as the schedule', async () => {
    const clock = createManualScheduleClock(START);
    const first = await startHarness({ extraYaml: SCHEDULE, scheduleClock: clock });
    const second = await first.startReplica();
    try {
      first.openai.enqueue({ text: 'All pods are healthy.' }, { text: 'Still healthy.' });
      expect(clock.pending()).toBe(2);
      await clock.advanceTo(FIRST_FIRING);
      const [post] = await waitFor(() => (scheduledPosts(first).length > 0 ? scheduledPosts(first) : undefined), { message: 'the scheduled post' });
      await waitFor(() => threadReplies(first, post!.ts).some((message) => message.text === 'All pods are healthy.'), { message: 'the answer' });
      await first.settled();
      expect(scheduledPosts(first)).toHaveLength(1);
      expect(first.openai.requests).toHaveLength(1);
      const asked = conversationOf(first.openai.requests[0]!).find((message) => message.role === 'user')?.text ?? '';
      expect(asked).toContain('The scheduled task "heartbeat"');
      expect(asked).toContain('Check the pods and restart anything stuck.');

      // The next firing is armed again in both processes, and again runs once.
      expect(clock.pending()).toBe(2);
      await clock.advanceTo(FIRST_FIRING + 15 * 60_000);
      await waitFor(() => scheduledPosts(first).length === 2, { message: 'the second scheduled post' });
      await waitFor(() => first.openai.requests.length === 2, { message: 'the second turn' });
      await first.settled();
      expect(scheduledPosts(first)).toHaveLength(2);
      expect(first.openai.requests).toHaveLength(2);
    } finally {
      await second.stop();
      await first.stop();
    }
  });

  it('runs a tool its autoApprove lists without a card; a tool it does not list waits for a person', async () => {
    const clock = createManualScheduleClock(START);
    const h = await harness({ extraYaml: SCHEDULE, scheduleClock: clock });
    h.openai.enqueue(
      { toolCalls: [{ name: 'get_pods', arguments: { namespace: 'prod' } }] },
      { toolCalls: [{ name: 'restart_service', arguments: { service: 'worker', namespace: 'prod' } }] },
      { text: 'Restarted the stuck worker.' },
    );
    await clock.advanceTo(FIRST_FIRING);
    const [post] = await waitFor(() => (scheduledPosts(h).length > 0 ? scheduledPosts(h) : undefined), { message: 'the scheduled post' });
    const threadTs = post!.ts;
    const card = await waitFor(() => threadReplies(h, threadTs).find((message) => cardButtons(message.blocks).length > 0), { message: 'a card' });
    await h.settled();
    expect(h.invocations()).toEqual([['get', 'pods', '-n', 'prod']]);
    expect(card.text).toContain('restart_service');
    expect(JSON.stringify(card.blocks)).toContain('Requested by schedule `heartbeat`');
    expect(threadReplies(h, threadTs).some((message) => message.text.includes('`get_pods` ran without a card: the schedule heartbeat'))).toBe(true);
    const autoApproved = (await h.auditEvents()).find((event) => event.type === 'auto-approved');
    expect(autoApproved).toMatchObject({ toolName: 'get_pods', mode: 'schedule', schedule: 'heartbeat' });
    // `/countersign pending` names the schedule too, not "an unknown user".
    await h.slashCommand({ user: 'UCAROL', text: 'pending' });
    const pending = await waitFor(() => h.slack.callsTo('chat.postEphemeral').find((call) => String(call.args.text).includes('waiting')), { message: 'the pending list' });
    expect(JSON.stringify(pending.args.blocks)).toContain('requested by schedule `heartbeat`');

    const approve = cardButtons(card.blocks).find((button) => button.actionId === 'countersign_approve')!;
    await h.click({ user: 'UBOB', cardTs: card.ts, threadTs, ...approve });
    await waitFor(() => threadReplies(h, threadTs).some((message) => message.text === 'Restarted the stuck worker.'), { message: 'the answer' });
    expect(h.invocations()).toEqual([
      ['get', 'pods', '-n', 'prod'],
      ['rollout', 'restart', 'deployment/worker', '-n', 'prod'],
    ]);
  });

  it('lets anyone in the channel use Try again on a failed scheduled turn, which still runs as the schedule', async () => {
    const clock = createManualScheduleClock(START);
    const h = await harness({ extraYaml: SCHEDULE, scheduleClock: clock });
    h.openai.enqueue({ error: { status: 400, message: 'bad request' } });
    await clock.advanceTo(FIRST_FIRING);
    const [post] = await waitFor(() => (scheduledPosts(h).length > 0 ? scheduledPosts(h) : undefined), { message: 'the scheduled post' });
    const threadTs = post!.ts;
    const notice = await waitFor(() => threadReplies(h, threadTs).find((message) => message.text.includes('could not finish')), { message: 'the failure notice' });
    const retry = cardButtons(notice.blocks).find((button) => button.actionId === 'countersign_retry')!;

    // The retried turn is the schedule's: get_pods is in its autoApprove and runs without a card.
    h.openai.enqueue({ toolCalls: [{ name: 'get_pods', arguments: { namespace: 'prod' } }] }, { text: 'Healthy after all.' });
    await h.click({ user: 'UBOB', cardTs: notice.ts, threadTs, ...retry });
    await waitFor(() => threadReplies(h, threadTs).some((message) => message.text === 'Healthy after all.'), { message: 'the retried answer' });
    expect(h.slack.callsTo('chat.postEphemeral')).toEqual([]);
    expect(h.invocations()).toEqual([['get', 'pods', '-n', 'prod']]);
    expect((await h.auditEvents()).find((event) => event.type === 'auto-approved')).toMatchObject({ toolName: 'get_pods', mode: 'schedule', schedule: 'heartbeat' });
  });

  it('does not run schedules in a receiver, and does not replay a firing missed while no process was up', async () => {
    const clock = createManualScheduleClock(START);
    await harness({ extraYaml: SCHEDULE, scheduleClock: clock, environment: { COUNTERSIGN_ROLE: 'receiver' } });
    expect(clock.pending()).toBe(0);
    // Started after 12:15 had passed: the first firing it runs is 12:30.
    const late = createManualScheduleClock(FIRST_FIRING + 60_000);
    const h = await harness({ extraYaml: SCHEDULE, scheduleClock: late });
    h.openai.enqueue({ text: 'Healthy at half past.' });
    await late.advanceTo(FIRST_FIRING + 14 * 60_000);
    await h.settled();
    expect(scheduledPosts(h)).toHaveLength(0);
    await late.advanceTo(FIRST_FIRING + 15 * 60_000);
    await waitFor(() => scheduledPosts(h).length === 1, { message: 'the 12:30 post' });
  });
});

/** The schedule's model asks which namespace: nobody asked for the turn, so who answers? */
const ASKING = `
policy:
  defaults:
    expiry: 1h
schedules:
  - name: heartbeat
    cron: '*/15 * * * *'
    channel: ${CHANNEL}
    prompt: Check the pods.
`;
const askNamespace = { toolCalls: [{ name: 'ask_user', arguments: { question: 'Which namespace?', options: ['staging', 'prod'] } }] };

describe("a scheduled turn's question", () => {
  it('is for anyone in the channel: their answer resumes the turn, which stays the schedule’s', async () => {
    const clock = createManualScheduleClock(START);
    const h = await harness({ extraYaml: ASKING, scheduleClock: clock });
    h.openai.enqueue(askNamespace, { text: 'Checked prod.' });
    await clock.advanceTo(FIRST_FIRING);
    const [post] = await waitFor(() => (scheduledPosts(h).length > 0 ? scheduledPosts(h) : undefined), { message: 'the scheduled post' });
    const threadTs = post!.ts;
    const card = await waitFor(() => threadReplies(h, threadTs).find((message) => cardButtons(message.blocks).length > 0), { message: 'the question card' });
    expect(JSON.stringify(card.blocks)).toContain(`Question for anyone in <#${CHANNEL}>`);
    expect(JSON.stringify(card.blocks)).toContain('Requested by schedule `heartbeat`');

    const prod = cardButtons(card.blocks)[1]!;
    await h.click({ user: 'UBOB', cardTs: card.ts, threadTs, ...prod });
    await waitFor(() => threadReplies(h, threadTs).some((message) => message.text === 'Checked prod.'), { message: 'the answer' });
    expect(h.slack.callsTo('chat.postEphemeral')).toEqual([]);
    expect(conversationOf(h.openai.requests[1]!).find((message) => message.role === 'tool')?.text).toContain('"answer":"prod"');
    expect(await h.bot.store.listOpenSteps({ teamId: TEAM_ID, limit: 10 })).toEqual([]);
  });

  it('opens its Reply form to anyone in the channel, and takes their answer', async () => {
    const clock = createManualScheduleClock(START);
    const h = await harness({ extraYaml: ASKING, scheduleClock: clock });
    const answerSchema = { type: 'object', properties: { namespace: { type: 'string' } }, required: ['namespace'] };
    h.openai.enqueue({ toolCalls: [{ name: 'ask_user', arguments: { question: 'Which namespace?', answerSchema } }] }, { text: 'Checked batch.' });
    await clock.advanceTo(FIRST_FIRING);
    const [post] = await waitFor(() => (scheduledPosts(h).length > 0 ? scheduledPosts(h) : undefined), { message: 'the scheduled post' });
    const threadTs = post!.ts;
    const card = await waitFor(() => threadReplies(h, threadTs).find((message) => cardButtons(message.blocks).length > 0), { message: 'the question card' });
    const reply = cardButtons(card.blocks).find((button) => button.actionId === 'countersign_reply')!;
    await h.click({ user: 'UBOB', cardTs: card.ts, threadTs, ...reply });
    const view = (await waitFor(() => h.slack.callsTo('views.open')[0], { message: 'the Reply form' })).args.view;
    await h.submitView({ user: 'UBOB', view, values: fillForm(view, { Namespace: 'batch' }) });
    await waitFor(() => threadReplies(h, threadTs).some((message) => message.text === 'Checked batch.'), { message: 'the answer' });
    expect(JSON.parse(conversationOf(h.openai.requests[1]!).find((message) => message.role === 'tool')?.text ?? '')).toEqual({ answeredBy: '<@UBOB>', answer: { namespace: 'batch' } });
  });

  it('expires when nobody answers it, and the model is told nobody answered', async () => {
    const clock = createManualScheduleClock(START);
    let now = FIRST_FIRING;
    const h = await harness({ extraYaml: ASKING, scheduleClock: clock, now: () => now, sweepIntervalMs: 20 });
    h.openai.enqueue(askNamespace, { text: 'Nobody said which namespace; checked nothing.' });
    await clock.advanceTo(FIRST_FIRING);
    const [post] = await waitFor(() => (scheduledPosts(h).length > 0 ? scheduledPosts(h) : undefined), { message: 'the scheduled post' });
    const threadTs = post!.ts;
    const card = await waitFor(() => threadReplies(h, threadTs).find((message) => cardButtons(message.blocks).length > 0), { message: 'the question card' });
    expect(JSON.stringify(card.blocks)).toContain('expires');

    now += 61 * 60_000;
    await waitFor(() => threadReplies(h, threadTs).some((message) => message.text === 'Nobody said which namespace; checked nothing.'), { message: 'the answer after expiry' });
    expect(conversationOf(h.openai.requests[1]!).find((message) => message.role === 'tool')?.text).toContain('nobody answered this question before it timed out');
    const closed = h.slack.messages(CHANNEL, threadTs).find((message) => message.ts === card.ts)!;
    expect(JSON.stringify(closed.blocks)).toContain('Expired without an answer');
    expect(cardButtons(closed.blocks)).toEqual([]);
    expect((await h.auditEvents()).filter((event) => event.type === 'expired')).toMatchObject([{ toolName: 'ask_user' }]);
  });
});

