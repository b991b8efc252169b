import type { Receiver } from '@slack/bolt';
import { LogLevel, WebClient } from '@slack/web-api';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { startFakeSlackApi, type FakeSlackApi } from '../../test/helpers/fake-slack-api.js';
import { createSlackApp } from './create-slack-app.js';
import { sendWellFormedSlackArguments, wellFormedArguments } from './well-formed-web-client.js';

const CHANNEL = 'C0OPS0001';
/** A model's answer cut mid-emoji: the high half of 🚀 (U+1F680) with no low half after it. */
const CUT = 'Deployed the api \ud83d';
const SENT = 'Deployed the api \ufffd';

let slack: FakeSlackApi | undefined;
afterEach(async () => {
  await slack?.close();
  slack = undefined;
});

async function wellFormedClient() {
  sendWellFormedSlackArguments();
  slack = await startFakeSlackApi({ botUserId: 'UBOT0001', teamId: 'T0TEAM001' });
  return { slack, client: new WebClient('xoxb-test', { slackApiUrl: slack.url, logLevel: LogLevel.ERROR, retryConfig: { retries: 0 } }) };
}

describe('a Web API client once well-formed arguments are installed', () => {
  it('posts a text holding a lone surrogate (form-encoding it threw "URI malformed" before anything was sent)', async () => {
    const { slack, client } = await wellFormedClient();
    await client.chat.postMessage({ channel: CHANNEL, text: CUT });
    expect(slack.callsTo('chat.postMessage').map((call) => call.args.text)).toEqual([SENT]);
  });

  it('sends blocks, views, ephemeral messages and streamed text well-formed too', async () => {
    const { slack, client: wellFormed } = await wellFormedClient();
    const blocks = [{ type: 'section' as const, text: { type: 'mrkdwn' as const, text: CUT } }];
    const posted = await wellFormed.chat.postMessage({ channel: CHANNEL, text: CUT, blocks });
    await wellFormed.chat.update({ channel: CHANNEL, ts: posted.ts!, text: CUT, blocks });
    await wellFormed.chat.postEphemeral({ channel: CHANNEL, user: 'UALICE', text: CUT });
    await wellFormed.views.publish({ user_id: 'UALICE', view: { type: 'home', blocks } });
    const stream = await wellFormed.chat.startStream({ channel: CHANNEL, thread_ts: posted.ts!, recipient_user_id: 'UALICE', recipient_team_id: 'T0TEAM001', markdown_text: CUT });
    await wellFormed.chat.appendStream({ channel: CHANNEL, ts: stream.ts!, markdown_text: CUT });
    await wellFormed.chat.stopStream({ channel: CHANNEL, ts: stream.ts!, markdown_text: CUT });
    const sent = JSON.stringify(slack.calls.map((call) => call.args));
    expect(sent).not.toMatch(/\\ud83d/i);
    expect(slack.callsTo('chat.update')[0]?.args.blocks?.[0]?.text?.text).toBe(SENT);
    expect(slack.callsTo('views.publish')[0]?.args.view?.blocks?.[0]?.text?.text).toBe(SENT);
    for (const method of ['chat.startStream', 'chat.appendStream', 'chat.stopStream']) expect(slack.callsTo(method)[0]?.args.markdown_text).toBe(SENT);
  });
});

describe("the bot's Slack app", () => {
  it('sends well-formed text from its listeners and from `app.client` (the messenger\'s)', async () => {
    slack = await startFakeSlackApi({ botUserId: 'UBOT0001', teamId: 'T0TEAM001' });
    const receiver: Receiver = { init() {}, start: async () => ({}), stop: async () => {} };
    const app = createSlackApp({
      settings: { botToken: 'xoxb-test', socketMode: false, apiUrl: slack.url, botUserId: 'UBOT0001', botId: 'BBOT0001', port: 0 },
      health: { kind: 'memory', ping: async () => {}, risks: async () => [] } as never,
      logger: pino({ level: 'silent' }),
      receiver,
      retryConfig: { retries: 0 },
    });
    // Bolt hands a listener a client of its own making (one per workspace), not `app.client`.
    app.event('app_mention', async ({ client, event }) => {
      await client.chat.postEphemeral({ channel: event.channel, user: event.user ?? '', text: CUT });
    });
    const event = { type: 'app_mention', user: 'UALICE', text: '<@UBOT0001> status?', ts: '1800000000.000100', channel: CHANNEL, event_ts: '1800000000.000100' };
    await app.processEvent({ body: { type: 'event_callback', team_id: 'T0TEAM001', api_app_id: 'A1', event_id: 'Ev1', event_time: 1, event }, ack: async () => {} });
    await app.client.chat.postEphemeral({ channel: CHANNEL, user: 'UALICE', text: CUT });
    expect(slack.callsTo('chat.postEphemeral').map((call) => call.args.text)).toEqual([SENT, SENT]);
  });
});

describe('well-formed arguments', () => {
  it('changes nothing but lone surrogates: whole emoji, numbers, Buffers and the shape stay as they were', () => {
    const file = Buffer.from('\ud83d\ude80');
    const mapped = wellFormedArguments({ text: '🚀 \ude80', count: 2, ok: true, file, nested: [{ text: '\ud83d', none: undefined }] });
    expect(mapped).toEqual({ text: '🚀 \ufffd', count: 2, ok: true, file, nested: [{ text: '\ufffd', none: undefined }] });
    expect(mapped.file).toBe(file);
  });
});
