import { ErrorCode, WebClient, type WebAPIRateLimitedError } from '@slack/web-api';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { quietSlackLogger } from './quiet-slack-logger.js';
import { startFakeSlackApi, type FakeSlackApi } from './fake-slack-api.js';

/** What the test wrapper adds to the product's emulator (whose own tests are in src/sandbox/emulator). */
describe('fake Slack Web API driven by the real WebClient', () => {
  let fake: FakeSlackApi;
  let client: WebClient;

  beforeAll(async () => {
    fake = await startFakeSlackApi();
    client = new WebClient('xoxb-test', { slackApiUrl: fake.url, retryConfig: { retries: 0 }, logger: quietSlackLogger });
  });
  beforeEach(() => fake.reset());
  afterAll(async () => {
    await fake.close();
  });

  it('seeds messages and hands out copies of the thread', async () => {
    const parent = fake.addMessage('C1', { user: 'U_ALICE', text: '<@U07OPSBOT1> restart payments' });
    await client.chat.postMessage({ channel: 'C1', thread_ts: parent.ts, text: 'Approval needed', blocks: [{ type: 'divider' }] });
    const thread = fake.messages('C1', parent.ts);
    expect(thread.map((message) => message.text)).toEqual(['<@U07OPSBOT1> restart payments', 'Approval needed']);
    thread[1]!.blocks!.push({ type: 'divider' });
    expect(fake.messages('C1', parent.ts)[1]?.blocks).toHaveLength(1);
    expect(fake.callsTo('chat.postMessage')[0]).toMatchObject({ token: 'xoxb-test', args: { thread_ts: parent.ts } });
  });

  it('answers a method from an override, and fails calls a predicate picks', async () => {
    fake.setMethodHandler('users.info', () => ({ ok: true, user: { id: 'U_ADMIN', is_admin: true } }));
    await expect(client.users.info({ user: 'U_ADMIN' })).resolves.toMatchObject({ user: { is_admin: true } });
    fake.failWhen('chat.postMessage', (call) => call.args.text === 'doomed', { error: 'channel_not_found' });
    await expect(client.chat.postMessage({ channel: 'C1', text: 'doomed' })).rejects.toMatchObject({ data: { error: 'channel_not_found' } });
    await expect(client.chat.postMessage({ channel: 'C1', text: 'fine' })).resolves.toMatchObject({ ok: true });
    expect(fake.messages('C1').map((message) => message.text)).toEqual(['fine']);
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
      logger: quietSlackLogger,
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
});
