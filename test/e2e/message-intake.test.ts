import { describe, expect, it } from 'vitest';
import { appMentionEnvelope, messageEnvelope, postSlackEvent } from '../helpers/signed-request.js';
import { BOT_USER_ID, CHANNEL, SIGNING_SECRET, TEAM_ID, nextTs, threadReplies, useHarnesses, waitFor, type Harness } from './harness.js';

const harness = useHarnesses();

const texts = (h: Harness, threadTs: string) => threadReplies(h, threadTs).map((message) => message.text);

async function followedThread(h: Harness) {
  h.openai.enqueue({ text: 'First answer.' });
  const threadTs = nextTs();
  await h.mention({ user: 'UALICE', text: 'hello', ts: threadTs });
  await waitFor(() => texts(h, threadTs).includes('First answer.'), { message: 'first answer' });
  await h.settled();
  return threadTs;
}

describe('Slack retries of a mention', () => {
  it('a retried mention (http_timeout) landing on another replica runs one turn', async () => {
    const h = await harness();
    const r = await h.startReplica();
    h.openai.enqueue({ text: 'Only once.' }, { text: 'twice!' });
    const ts = nextTs();
    const envelope = appMentionEnvelope({ user: 'UALICE', text: `<@${BOT_USER_ID}> hello`, channel: CHANNEL, teamId: TEAM_ID, botUserId: BOT_USER_ID, ts, eventId: `Ev-probe-${ts}` });
    await Promise.all([
      postSlackEvent({ url: h.eventsUrl, signingSecret: SIGNING_SECRET, envelope }),
      postSlackEvent({ url: r.eventsUrl, signingSecret: SIGNING_SECRET, envelope, retryNum: 1, retryReason: 'http_timeout' }),
    ]);
    await waitFor(() => texts(h, ts).includes('Only once.'), { message: 'answer' });
    await h.settled();
    expect(h.openai.requests).toHaveLength(1);
    expect(texts(h, ts)).toEqual(['Only once.']);
  });
});

describe('message shapes in a followed thread', () => {
  it('bot_message subtype, another app bot with bot_id+user, message_changed: no turn', async () => {
    const h = await harness();
    const threadTs = await followedThread(h);
    const post = (envelope: object) => postSlackEvent({ url: h.eventsUrl, signingSecret: SIGNING_SECRET, envelope });
    await post(messageEnvelope({ botId: 'BOTHER01', subtype: 'bot_message', text: 'deploy done', channel: CHANNEL, channelType: 'channel', threadTs, teamId: TEAM_ID }));
    await post(messageEnvelope({ user: 'UOTHERBOT', botId: 'BOTHER02', text: 'alert fired', channel: CHANNEL, channelType: 'channel', threadTs, teamId: TEAM_ID }));
    const changed = messageEnvelope({ user: 'UALICE', subtype: 'message_changed', text: '', channel: CHANNEL, channelType: 'channel', threadTs, teamId: TEAM_ID }) as { event: Record<string, unknown> };
    changed.event.message = { user: 'UALICE', text: 'edited', ts: nextTs(), thread_ts: threadTs };
    await post(changed);
    await h.settled();
    expect(h.openai.requests).toHaveLength(1);
  });

  it('thread_broadcast and file_share each run one turn', async () => {
    const h = await harness();
    const threadTs = await followedThread(h);
    h.openai.enqueue({ text: 'Broadcast answered.' }, { text: 'File answered.' }, { text: 'extra' });
    await postSlackEvent({ url: h.eventsUrl, signingSecret: SIGNING_SECRET, envelope: messageEnvelope({ user: 'UALICE', subtype: 'thread_broadcast', text: 'also tell everyone', channel: CHANNEL, channelType: 'channel', threadTs, teamId: TEAM_ID }) });
    await waitFor(() => texts(h, threadTs).includes('Broadcast answered.'), { message: 'broadcast' });
    await postSlackEvent({ url: h.eventsUrl, signingSecret: SIGNING_SECRET, envelope: messageEnvelope({ user: 'UALICE', subtype: 'file_share', text: 'here is the log', channel: CHANNEL, channelType: 'channel', threadTs, teamId: TEAM_ID }) });
    await waitFor(() => texts(h, threadTs).includes('File answered.'), { message: 'file' });
    await h.settled();
    expect(h.openai.requests).toHaveLength(3);
  });

  it('a DM is answered once', async () => {
    const h = await harness();
    h.openai.enqueue({ text: 'DM answer.' }, { text: 'twice' });
    const ts = nextTs();
    await postSlackEvent({ url: h.eventsUrl, signingSecret: SIGNING_SECRET, envelope: messageEnvelope({ user: 'UALICE', text: 'hi there', channel: 'D0ALICE01', channelType: 'im', ts, teamId: TEAM_ID, eventId: `Ev-dm-${ts}` }) });
    await postSlackEvent({ url: h.eventsUrl, signingSecret: SIGNING_SECRET, envelope: messageEnvelope({ user: 'UALICE', text: 'hi there', channel: 'D0ALICE01', channelType: 'im', ts, teamId: TEAM_ID, eventId: `Ev-dm-${ts}` }), retryNum: 1 });
    await waitFor(() => h.slack.messages('D0ALICE01', ts).some((m) => m.text === 'DM answer.'), { message: 'dm' });
    await h.settled();
    expect(h.openai.requests).toHaveLength(1);
  });
});

