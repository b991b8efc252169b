import { ErrorCode, LogLevel, WebClient, type Logger, type WebAPIPlatformError, type WebAPIRateLimitedError } from '@slack/web-api';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startFakeSlackApi, type FakeSlackApi } from './fake-slack-api.js';

/** WebClient logs Slack's `[ERROR]` response metadata; these tests provoke such errors on purpose. */
const quietLogger: Logger = {
  debug: () => {},
  info: () => {},
  warn: () => {},
  error: () => {},
  setLevel: () => {},
  getLevel: () => LogLevel.ERROR,
  setName: () => {},
};

describe('fake Slack Web API driven by the real WebClient', () => {
  let fake: FakeSlackApi;
  let client: WebClient;

  beforeAll(async () => {
    fake = await startFakeSlackApi();
    client = new WebClient('xoxb-test', { slackApiUrl: fake.url, retryConfig: { retries: 0 }, logger: quietLogger });
  });
  beforeEach(() => fake.reset());
  afterAll(async () => {
    await fake.close();
  });

  it('answers auth.test with the bot identity', async () => {
    const result = await client.auth.test();
    expect(result).toMatchObject({ ok: true, user_id: 'U07OPSBOT1', bot_id: 'B07OPSBOT1', team_id: 'T0A1B2C3D' });
    expect(fake.callsTo('auth.test')[0]?.token).toBe('xoxb-test');
  });

  it('round-trips postMessage, update and replies in a seeded thread', async () => {
    const parent = fake.addMessage('C1', { user: 'U_ALICE', text: '<@U07OPSBOT1> restart payments' });
    const posted = await client.chat.postMessage({
      channel: 'C1',
      thread_ts: parent.ts,
      text: 'Approval needed',
      blocks: [{ type: 'section', text: { type: 'mrkdwn', text: '*Approve?*' } }],
    });
    expect(posted.ok).toBe(true);
    expect(posted.ts).toMatch(/^\d+\.\d{6}$/);
    expect(posted.message?.bot_id).toBe('B07OPSBOT1');

    const call = fake.callsTo('chat.postMessage')[0];
    expect(call?.args.blocks).toEqual([{ type: 'section', text: { type: 'mrkdwn', text: '*Approve?*' } }]);

    await client.chat.update({ channel: 'C1', ts: posted.ts ?? '', text: 'Approved by <@U_BOB>', blocks: [] });
    const replies = await client.conversations.replies({ channel: 'C1', ts: parent.ts });
    expect(replies.messages?.map((message) => message.text)).toEqual(['<@U07OPSBOT1> restart payments', 'Approved by <@U_BOB>']);
    expect(fake.messages('C1', parent.ts).map((message) => message.blocks)).toEqual([undefined, []]);
  });

  it('answers message_not_found for an unknown ts on chat.update', async () => {
    const error = await client.chat.update({ channel: 'C1', ts: '1.000001', text: 'x' }).catch((caught: unknown) => caught);
    expect((error as WebAPIPlatformError).code).toBe(ErrorCode.PlatformError);
    expect((error as WebAPIPlatformError).data.error).toBe('message_not_found');
  });

  it('waits for a call that has not happened yet and explains timeouts', async () => {
    const waiting = fake.waitForCall('chat.postMessage', (call) => call.args.text === 'second');
    await client.chat.postMessage({ channel: 'C1', text: 'first' });
    await client.chat.postMessage({ channel: 'C1', text: 'second' });
    await expect(waiting).resolves.toMatchObject({ args: { channel: 'C1', text: 'second' } });
    await expect(fake.waitForCall('views.open', undefined, { timeoutMs: 50 })).rejects.toThrow(/chat\.postMessage, chat\.postMessage/);
  });

  it('rejects an injected HTTP 500 without retrying', async () => {
    fake.failNext('chat.postMessage', { status: 500 });
    await expect(client.chat.postMessage({ channel: 'C1', text: 'hi' })).rejects.toMatchObject({
      code: ErrorCode.HTTPError,
      statusCode: 500,
    });
    await expect(client.chat.postMessage({ channel: 'C1', text: 'hi' })).resolves.toMatchObject({ ok: true });
  });

  it('gives a rate-limited error for an injected 429 when rejectRateLimitedCalls is set', async () => {
    const strictClient = new WebClient('xoxb-test', {
      slackApiUrl: fake.url,
      retryConfig: { retries: 0 },
      rejectRateLimitedCalls: true,
      logger: quietLogger,
    });
    fake.failNext('chat.update', { status: 429, retryAfterSeconds: 7 });
    const error = (await strictClient.chat.update({ channel: 'C1', ts: '1.1', text: 'x' }).catch((caught: unknown) => caught)) as WebAPIRateLimitedError;
    expect(error.code).toBe(ErrorCode.RateLimitedError);
    expect(error.retryAfter).toBe(7);
  });

  it('answers an injected platform error with ok:false', async () => {
    fake.failNext('views.open', { error: 'expired_trigger_id' });
    await expect(client.views.open({ trigger_id: 't1', view: { type: 'modal', title: { type: 'plain_text', text: 'x' }, blocks: [] } })).rejects.toMatchObject({
      data: { error: 'expired_trigger_id' },
    });
  });

  it('rejects 51 blocks and over-long text as invalid_blocks', async () => {
    const blocks = Array.from({ length: 51 }, () => ({ type: 'divider' as const }));
    await expect(client.chat.postMessage({ channel: 'C1', text: 'x', blocks })).rejects.toMatchObject({
      data: { error: 'invalid_blocks' },
    });
    const longSection = [{ type: 'section' as const, text: { type: 'mrkdwn' as const, text: 'a'.repeat(3001) } }];
    await expect(client.chat.postMessage({ channel: 'C1', text: 'x', blocks: longSection })).rejects.toMatchObject({
      data: { error: 'invalid_blocks', errors: ['must be less than 3001 characters [json-pointer:/blocks/0/text/text]'] },
    });
    expect(fake.messages('C1')).toEqual([]);
  });

  it('streams a message through chat.startStream/appendStream/stopStream', async () => {
    const streamer = client.chatStream({ channel: 'C1', thread_ts: '1.000001', recipient_team_id: 'T0A1B2C3D', recipient_user_id: 'U_ALICE', buffer_size: 1 });
    await streamer.append({ markdown_text: 'Hello' });
    await streamer.append({ markdown_text: ', world' });
    await streamer.stop({ blocks: [{ type: 'context', elements: [{ type: 'mrkdwn', text: 'done' }] }] });
    const [message] = fake.messages('C1', '1.000001');
    expect(message).toMatchObject({ text: 'Hello, world', thread_ts: '1.000001', blocks: [{ type: 'context' }] });
    await expect(client.chat.appendStream({ channel: 'C1', ts: message?.ts ?? '', markdown_text: 'late' })).rejects.toMatchObject({
      data: { error: 'message_not_in_streaming_state' },
    });
  });

  it('opens views once per trigger id and answers unknown methods', async () => {
    const view = { type: 'modal' as const, callback_id: 'edit', title: { type: 'plain_text' as const, text: 'Edit' }, blocks: [] };
    const opened = await client.views.open({ trigger_id: 'trigger-1', view });
    expect(opened.view).toMatchObject({ id: expect.stringMatching(/^V/), callback_id: 'edit', hash: expect.any(String) });
    await expect(client.views.open({ trigger_id: 'trigger-1', view })).rejects.toMatchObject({ data: { error: 'exchanged_trigger_id' } });
    await expect(client.apiCall('no.such.method')).rejects.toMatchObject({ data: { error: 'unknown_method' } });
  });

  it('answers usergroups.users.list from configured members', async () => {
    fake.setUsergroupUsers('S_APPROVERS', ['U_BOB']);
    await expect(client.usergroups.users.list({ usergroup: 'S_APPROVERS' })).resolves.toMatchObject({ users: ['U_BOB'] });
    await expect(client.usergroups.users.list({ usergroup: 'S_OTHER' })).resolves.toMatchObject({ users: [] });
  });

  it('deletes own messages, keeps ephemerals out of history and refuses duplicate reactions', async () => {
    const human = fake.addMessage('C1', { user: 'U_ALICE', text: 'hi' });
    const posted = await client.chat.postMessage({ channel: 'C1', text: 'temporary' });
    await client.chat.delete({ channel: 'C1', ts: posted.ts ?? '' });
    await expect(client.chat.delete({ channel: 'C1', ts: human.ts })).rejects.toMatchObject({ data: { error: 'cant_delete_message' } });
    await expect(client.chat.postEphemeral({ channel: 'C1', user: 'U_BOB', text: 'not yours' })).resolves.toMatchObject({ message_ts: expect.any(String) });
    expect(fake.messages('C1').map((message) => message.text)).toEqual(['hi']);
    await client.reactions.add({ channel: 'C1', timestamp: human.ts, name: 'eyes' });
    await expect(client.reactions.add({ channel: 'C1', timestamp: human.ts, name: 'eyes' })).rejects.toMatchObject({ data: { error: 'already_reacted' } });
  });

  it('accepts JSON bodies and records the bearer token', async () => {
    const response = await fetch(`${fake.url}chat.postMessage`, {
      method: 'POST',
      headers: { 'content-type': 'application/json; charset=utf-8', authorization: 'Bearer xoxb-json' },
      body: JSON.stringify({ channel: 'C2', text: 'json', blocks: [{ type: 'divider' }] }),
    });
    expect(await response.json()).toMatchObject({ ok: true, channel: 'C2' });
    expect(fake.callsTo('chat.postMessage')[0]).toMatchObject({ token: 'xoxb-json', args: { blocks: [{ type: 'divider' }] } });
  });
});
