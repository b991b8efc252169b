import { describe, expect, it } from 'vitest';
import { conversationOf } from '../helpers/fake-openai.js';
import { messageEnvelope, postSlackEvent } from '../helpers/signed-request.js';
import { CHANNEL, SIGNING_SECRET, TEAM_ID, cardButtons, nextTs, threadReplies, useHarnesses, waitFor } from './harness.js';
import { CLICK_STORE_WAIT_MS } from '../../src/approvals/decide-call.js';

const harness = useHarnesses();

describe('conversation details a user notices', () => {
  it('works over the Responses API too: card, approval, answer', async () => {
    const h = await harness({ api: 'responses' });
    h.openai.enqueue({ toolCalls: [{ name: 'restart_service', arguments: { service: 'api', namespace: 'prod' } }] }, { text: 'Restarted api.' });
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'restart api in prod', ts: threadTs });
    const card = await waitFor(() => threadReplies(h, threadTs).find((message) => cardButtons(message.blocks).length > 0), { message: 'card' });
    expect(h.openai.requests[0]?.api).toBe('responses');
    const approve = cardButtons(card.blocks).find((button) => button.actionId === 'countersign_approve')!;
    await h.click({ user: 'UBOB', cardTs: card.ts, threadTs, ...approve });
    await waitFor(() => threadReplies(h, threadTs).some((message) => message.text === 'Restarted api.'), { message: 'answer' });
    expect(h.invocations()).toEqual([['rollout', 'restart', 'deployment/api', '-n', 'prod']]);
  });

  it('shows a status once a turn takes a while, then while a tool runs, all before the answer', async () => {
    const h = await harness();
    const threadTs = nextTs();
    const statuses = () => h.slack.callsTo('assistant.threads.setStatus').map((call) => [call.args.thread_ts, call.args.status]);
    let asked = 0;
    // The model thinks until the thread says so (the status shows 250 ms into the turn).
    h.openai.setResponder(async () => {
      asked += 1;
      if (asked > 1) return { text: 'All pods are running.' };
      await waitFor(() => statuses().length > 0, { message: 'the thinking status' });
      return { toolCalls: [{ name: 'get_pods', arguments: { namespace: 'staging' } }] };
    });
    await h.mention({ user: 'UALICE', text: 'how are the pods?', ts: threadTs });
    await waitFor(() => threadReplies(h, threadTs).some((message) => message.text === 'All pods are running.'), { message: 'answer' });
    expect(statuses()).toEqual([
      [threadTs, 'is thinking…'],
      [threadTs, 'is running get_pods…'],
    ]);
    // Slack clears the status when the answer is posted: one set after it would stay under the answer.
    const methods = h.slack.calls.map((call) => call.method);
    expect(methods.lastIndexOf('assistant.threads.setStatus')).toBeLessThan(methods.lastIndexOf('chat.postMessage'));
  });

  it('shows no status for a turn answered at once: nothing waits on Slack before the model', async () => {
    const h = await harness({ statusDelayMs: 60_000 });
    h.openai.enqueue({ toolCalls: [{ name: 'get_pods', arguments: { namespace: 'staging' } }] }, { text: 'All pods are running.' });
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'how are the pods?', ts: threadTs });
    await waitFor(() => threadReplies(h, threadTs).some((message) => message.text === 'All pods are running.'), { message: 'answer' });
    // The turn is over once its answer is posted; its status could only have gone out before.
    expect(h.slack.callsTo('assistant.threads.setStatus')).toEqual([]);
  });

  it('neutralises broadcast pings and converts markdown in answers', async () => {
    const h = await harness();
    h.openai.enqueue({ text: 'Hey <!channel> and @here: **done**, see [the runbook](https://runbooks.example.com/worker).' });
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'status?', ts: threadTs });
    const answer = await waitFor(() => threadReplies(h, threadTs)[0], { message: 'answer' });
    expect(answer.text).not.toContain('<!channel>');
    expect(answer.text).not.toMatch(/(^|[^\u200b])@here/);
    expect(answer.text).toContain('*done*');
    expect(answer.text).toContain('<https://runbooks.example.com/worker|the runbook>');
  });

  it('splits a long answer into several messages within Slack limits', async () => {
    const h = await harness();
    const paragraph = `${'word '.repeat(150).trim()}.`;
    h.openai.enqueue({ text: Array.from({ length: 12 }, () => paragraph).join('\n\n') });
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'write a lot', ts: threadTs });
    await waitFor(() => threadReplies(h, threadTs).length >= 3, { message: 'several messages' });
    await h.settled();
    const texts = threadReplies(h, threadTs).map((message) => message.text);
    for (const text of texts) expect(text.length).toBeLessThanOrEqual(4000);
    expect(texts.join('').replaceAll(/\s/g, '')).toBe(Array.from({ length: 12 }, () => paragraph).join('').replaceAll(/\s/g, ''));
  });

  it('handles a message that arrives during a turn after that turn, not dropped and not interleaved', async () => {
    const h = await harness();
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let calls = 0;
    h.openai.setResponder(async () => {
      calls += 1;
      if (calls === 1) {
        await gate;
        return { text: 'First answer.' };
      }
      return { text: 'Second answer.' };
    });
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'first', ts: threadTs });
    await waitFor(() => h.openai.requests.length === 1, { message: 'first model request' });
    await h.threadMessage({ user: 'UBOB', text: 'second', threadTs, ts: nextTs() });
    // The first turn waits on the model; 'second' has been handled once only that turn's request is.
    await h.settled({ holding: 1 });
    expect(h.openai.requests).toHaveLength(1);
    release();
    await waitFor(() => threadReplies(h, threadTs).length === 2, { message: 'two answers' });
    expect(threadReplies(h, threadTs).map((message) => message.text)).toEqual(['First answer.', 'Second answer.']);
    const second = conversationOf(h.openai.requests[1]!);
    expect(second.some((message) => message.role === 'assistant' && message.text === 'First answer.')).toBe(true);
  });

  it('answers direct messages without a mention, in a thread of the DM', async () => {
    const h = await harness();
    h.openai.enqueue({ text: 'Hi in DM.' });
    const dm = 'D0DIRECT01';
    const ts = nextTs();
    await postSlackEvent({
      url: h.eventsUrl,
      signingSecret: SIGNING_SECRET,
      envelope: messageEnvelope({ user: 'UALICE', text: 'hello there', channel: dm, channelType: 'im', ts, teamId: TEAM_ID }),
    });
    await waitFor(() => threadReplies(h, ts, dm).some((message) => message.text === 'Hi in DM.'), { message: 'DM answer' });
  });

  it('never answers other bots or its own messages', async () => {
    const h = await harness();
    h.openai.enqueue({ text: 'Hello.' });
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'hi', ts: threadTs });
    await waitFor(() => threadReplies(h, threadTs).length === 1, { message: 'answer' });
    await postSlackEvent({
      url: h.eventsUrl,
      signingSecret: SIGNING_SECRET,
      envelope: messageEnvelope({ botId: 'BOTHER01', text: 'I am another bot', channel: CHANNEL, threadTs, teamId: TEAM_ID, subtype: 'bot_message' }),
    });
    await postSlackEvent({
      url: h.eventsUrl,
      signingSecret: SIGNING_SECRET,
      envelope: messageEnvelope({ user: 'UOTHERBOT', botId: 'BOTHER02', text: 'bot with a user id', channel: CHANNEL, threadTs, teamId: TEAM_ID }),
    });
    await h.settled();
    expect(h.openai.requests).toHaveLength(1);
  });

  it('says so in the thread when the card cannot be posted, and runs nothing', async () => {
    const h = await harness();
    h.openai.enqueue({ toolCalls: [{ name: 'restart_service', arguments: { service: 'api', namespace: 'prod' } }] });
    h.slack.failNext('chat.postMessage', { error: 'invalid_blocks' });
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'restart api', ts: threadTs });
    await waitFor(() => threadReplies(h, threadTs).some((message) => message.text.includes('could not post the approval card')), { message: 'notice' });
    await h.settled();
    expect(h.invocations()).toEqual([]);
  });
});

describe('when Redis is unreachable', () => {
  it('answers a mention and a click with a short message instead of silence, and runs nothing', async () => {
    const { startRedisServer } = await import('../helpers/redis-server.js');
    const redis = await startRedisServer();
    try {
      // Clicks and replies wait 1 s for Redis to come back instead of CLICK_STORE_WAIT_MS: what they say after is the same.
      const h = await harness({ redisUrl: redis.url, storeWaitMs: 1_000 });
      h.openai.enqueue({ toolCalls: [{ name: 'restart_service', arguments: { service: 'api', namespace: 'prod' } }] });
      const threadTs = nextTs();
      await h.mention({ user: 'UALICE', text: 'restart api', ts: threadTs });
      const card = await waitFor(() => threadReplies(h, threadTs).find((message) => cardButtons(message.blocks).length > 0), { message: 'card' });
      await redis.stop();

      const approve = cardButtons(card.blocks).find((button) => button.actionId === 'countersign_approve')!;
      await h.click({ user: 'UBOB', cardTs: card.ts, threadTs, ...approve });
      // After the click has waited (storeWaitMs) for Redis to come back.
      const ephemeral = await waitFor(() => h.slack.callsTo('chat.postEphemeral')[0], { message: 'ephemeral', timeoutMs: CLICK_STORE_WAIT_MS + 10_000 });
      expect(ephemeral.args.text).toContain('could not record your decision');

      await h.threadMessage({ user: 'UALICE', text: 'hello?', threadTs, ts: nextTs() });
      await h.mention({ user: 'UALICE', text: 'anyone?', ts: nextTs(), threadTs });
      await waitFor(() => threadReplies(h, threadTs).some((message) => message.text.includes('could not take this message')), { message: 'notice' });
      const health = await fetch(`${h.baseUrl}/healthz`);
      expect(health.status).toBe(503);
      expect(h.invocations()).toEqual([]);
    } finally {
      await redis.stop().catch(() => {});
    }
  });
});
