import type { AddressInfo } from 'node:net';
import { App, LogLevel, type BlockAction, type ButtonAction } from '@slack/bolt';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { trackSlackRequests, type SlackRequestTracker } from '../../../../test/helpers/bot-activity.js';
import { startFakeSlackApi, type FakeSlackApi } from '../../../../test/helpers/fake-slack-api.js';
import { blockActionsPayload, viewSubmissionPayload } from '../../../../test/helpers/slack-interaction-payloads.js';
import { appMentionEnvelope, messageEnvelope } from './event-envelopes.js';
import { postSlackEvent, postSlackInteraction, slackSignature } from './signed-request.js';

const SIGNING_SECRET = 'test-signing-secret';

describe('signed requests against a real Bolt App', () => {
  let fakeSlack: FakeSlackApi;
  let app: App;
  let requests: SlackRequestTracker;
  let eventsUrl: string;
  const received: Array<{ kind: string; body: any; retryNum?: number | undefined }> = [];

  beforeAll(async () => {
    fakeSlack = await startFakeSlackApi();
    app = new App({
      signingSecret: SIGNING_SECRET,
      token: 'xoxb-test',
      botId: 'B07OPSBOT1',
      botUserId: 'U07OPSBOT1',
      logLevel: LogLevel.ERROR,
      clientOptions: { slackApiUrl: fakeSlack.url, retryConfig: { retries: 0 } },
    });
    app.event('app_mention', async ({ event, say, context }) => {
      received.push({ kind: 'app_mention', body: event, retryNum: context.retryNum });
      await say({ text: 'on it', thread_ts: event.thread_ts ?? event.ts });
    });
    app.message(async ({ message }) => {
      received.push({ kind: 'message', body: message });
    });
    app.action<BlockAction<ButtonAction>>('approval_approve', async ({ ack, action, body }) => {
      await ack();
      received.push({ kind: 'action', body: { value: action.value, user: body.user.id, container: body.container } });
    });
    app.view('approval_edit_submit', async ({ ack, view }) => {
      received.push({ kind: 'view', body: view });
      await ack({ response_action: 'errors', errors: { 'arg:replicas': 'must be a number' } });
    });
    requests = trackSlackRequests(app);
    const server = await app.start({ port: 0, host: '127.0.0.1' });
    eventsUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/slack/events`;
  });
  beforeEach(() => {
    received.length = 0;
    fakeSlack.reset();
  });
  afterAll(async () => {
    await app.stop();
    await fakeSlack.close();
  });

  it('computes the v0 signature of Slack\'s documented example', () => {
    // The worked example from Slack's "Verifying requests from Slack" guide.
    const body =
      'token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar' +
      '&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=' +
      '&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN' +
      '&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c';
    expect(slackSignature({ signingSecret: '8f742231b10e8888abcd99yyyzzz85a5', timestamp: 1531420618, body })).toBe(
      'v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503',
    );
  });

  it('delivers a signed app_mention to app.event and the reply reaches the fake Web API', async () => {
    const envelope = appMentionEnvelope({ user: 'U_ALICE', text: '<@U07OPSBOT1> restart payments-api', channel: 'C_OPS' });
    const response = await postSlackEvent({ url: eventsUrl, signingSecret: SIGNING_SECRET, envelope });
    expect(response.status).toBe(200);
    const reply = await fakeSlack.waitForCall('chat.postMessage');
    expect(reply.args).toMatchObject({ channel: 'C_OPS', text: 'on it' });
    expect(received).toMatchObject([{ kind: 'app_mention', body: { user: 'U_ALICE', channel: 'C_OPS' } }]);
    expect(received[0]?.body.blocks[0].elements[0].elements[0]).toEqual({ type: 'user', user_id: 'U07OPSBOT1' });
  });

  it('passes the retry number through to the listener context', async () => {
    const envelope = appMentionEnvelope({ user: 'U_ALICE', text: '<@U07OPSBOT1> hi', channel: 'C_OPS', threadTs: '1736954412.004219' });
    await postSlackEvent({ url: eventsUrl, signingSecret: SIGNING_SECRET, envelope, retryNum: 1 });
    await fakeSlack.waitForCall('chat.postMessage', (call) => call.args.thread_ts === '1736954412.004219');
    expect(received[0]?.retryNum).toBe(1);
  });

  it('answers 401 to a bad signature and does not run the listener', async () => {
    const startedBefore = requests.started();
    const envelope = appMentionEnvelope({ user: 'U_ALICE', text: '<@U07OPSBOT1> hi', channel: 'C_OPS' });
    const response = await postSlackEvent({ url: eventsUrl, signingSecret: SIGNING_SECRET, envelope, signature: 'v0=deadbeef' });
    expect(response.status).toBe(401);
    const stale = await postSlackEvent({ url: eventsUrl, signingSecret: SIGNING_SECRET, envelope, timestamp: Math.floor(Date.now() / 1000) - 600 });
    expect(stale.status).toBe(401);
    // A request that got past the check would be handed to the app before any response.
    await requests.handled();
    expect(requests.started()).toBe(startedBefore);
    expect(received).toEqual([]);
    expect(fakeSlack.calls).toEqual([]);
  });

  it('delivers a thread message event to app.message', async () => {
    const envelope = messageEnvelope({ user: 'U_BOB', text: 'looks good', channel: 'C_OPS', threadTs: '1736954412.004219' });
    expect((await postSlackEvent({ url: eventsUrl, signingSecret: SIGNING_SECRET, envelope })).status).toBe(200);
    await expect.poll(() => received).toMatchObject([{ kind: 'message', body: { text: 'looks good', thread_ts: '1736954412.004219', channel_type: 'channel' } }]);
  });

  it('delivers a signed block_actions payload to app.action', async () => {
    const payload = blockActionsPayload({
      user: 'U_BOB',
      channel: 'C_OPS',
      messageTs: '1736954415.008900',
      threadTs: '1736954412.004219',
      actionId: 'approval_approve',
      blockId: 'appr_actions:ap_1',
      value: 'ap_1',
    });
    const response = await postSlackInteraction({ url: eventsUrl, signingSecret: SIGNING_SECRET, payload });
    expect(response.status).toBe(200);
    await expect.poll(() => received).toMatchObject([
      { kind: 'action', body: { value: 'ap_1', user: 'U_BOB', container: { channel_id: 'C_OPS', message_ts: '1736954415.008900', thread_ts: '1736954412.004219' } } },
    ]);
  });

  it('returns the view ack body for a view_submission', async () => {
    const payload = viewSubmissionPayload({
      user: 'U_BOB',
      callbackId: 'approval_edit_submit',
      privateMetadata: JSON.stringify({ approvalId: 'ap_1' }),
      values: { 'arg:replicas': { value: { type: 'number_input', value: 'five' } } },
    });
    const response = await postSlackInteraction({ url: eventsUrl, signingSecret: SIGNING_SECRET, payload });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ response_action: 'errors', errors: { 'arg:replicas': 'must be a number' } });
    expect(received[0]?.body).toMatchObject({ private_metadata: '{"approvalId":"ap_1"}', state: { values: { 'arg:replicas': { value: { value: 'five' } } } } });
  });
});
