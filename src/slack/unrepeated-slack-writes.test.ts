import { LogLevel, WebClient } from '@slack/web-api';
import { afterEach, describe, expect, it } from 'vitest';
import { startFakeSlackApi, type FakeSlackApi } from '../../test/helpers/fake-slack-api.js';
import { startFlakySlackEdge, type LostReply } from '../../test/helpers/flaky-slack-edge.js';
import { sharedLeanFetch } from '../http/lean-fetch.js';
import { SLACK_RETRY_CONFIG } from './create-slack-app.js';
import { createUnrepeatedSlackWrites } from './unrepeated-slack-writes.js';

const CHANNEL = 'C0OPS0001';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function fakeSlack(): Promise<FakeSlackApi> {
  const slack = await startFakeSlackApi({ botUserId: 'UBOT0001', teamId: 'T0TEAM001' });
  cleanups.push(() => slack.close());
  return slack;
}

async function flakyEdge(slack: FakeSlackApi, options: { method: string; lost: LostReply }): Promise<string> {
  const edge = await startFlakySlackEdge(slack, options);
  cleanups.push(() => edge.close());
  return edge.url;
}

/** The client as the app builds it, with a short timeout so a late answer does not take 15 s. */
function slackClient(options: { apiUrl: string; fetch?: typeof globalThis.fetch }): WebClient {
  const writes = createUnrepeatedSlackWrites({ retryConfig: SLACK_RETRY_CONFIG, fetch: options.fetch ?? sharedLeanFetch() });
  return new WebClient('xoxb-test', { slackApiUrl: options.apiUrl, retryConfig: writes.retryConfig, timeout: 300, fetch: writes.fetch, logLevel: LogLevel.ERROR });
}

const postedTexts = (slack: FakeSlackApi) => slack.messages(CHANNEL).map((message) => message.text);

describe('a Slack post whose reply is lost', () => {
  it.each<LostReply>(['bad-gateway', 'late', 'dropped'])('is not posted a second time (%s)', async (lost) => {
    const slack = await fakeSlack();
    const client = slackClient({ apiUrl: await flakyEdge(slack, { method: 'chat.postMessage', lost }) });

    const outcome = await client.chat.postMessage({ channel: CHANNEL, text: 'Only one answer.' }).then(
      () => 'posted',
      (error: Error) => error.message,
    );

    expect(postedTexts(slack)).toEqual(['Only one answer.']);
    expect(outcome).toMatch(/chat\.postMessage failed: .*it may have been posted all the same, so it was not sent again/);
  });

  it('is not appended twice to a native stream', async () => {
    const slack = await fakeSlack();
    const client = slackClient({ apiUrl: await flakyEdge(slack, { method: 'chat.appendStream', lost: 'bad-gateway' }) });
    const started = await client.chat.startStream({ channel: CHANNEL, thread_ts: '1800000000.000100', recipient_user_id: 'UALICE', recipient_team_id: 'T0TEAM001' });

    const appended = client.chat.appendStream({ channel: CHANNEL, ts: started.ts as string, markdown_text: 'once' });
    await appended.catch(() => {});

    expect(slack.callsTo('chat.appendStream')).toHaveLength(1);
    await expect(appended).rejects.toThrow(/not sent again/);
  });

  it('is sent again after a 429, which Slack applied nothing of', async () => {
    const slack = await fakeSlack();
    slack.failNext('chat.postMessage', { status: 429, retryAfterSeconds: 0 });
    const client = slackClient({ apiUrl: slack.url });

    await client.chat.postMessage({ channel: CHANNEL, text: 'After the rate limit.' });

    expect(slack.callsTo('chat.postMessage')).toHaveLength(2);
    expect(postedTexts(slack)).toEqual(['After the rate limit.']);
  });

  it('is sent again when the connection was never made', async () => {
    const slack = await fakeSlack();
    let refused = false;
    const refusingOnce: typeof globalThis.fetch = async (input, init) => {
      if (refused) return sharedLeanFetch()(input, init);
      refused = true;
      throw new TypeError('fetch failed', { cause: Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:443'), { code: 'ECONNREFUSED' }) });
    };
    const client = slackClient({ apiUrl: slack.url, fetch: refusingOnce });

    await client.chat.postMessage({ channel: CHANNEL, text: 'After the refused connection.' });

    expect(postedTexts(slack)).toEqual(['After the refused connection.']);
  });
});

describe('a Slack call that is safe to repeat', () => {
  it('is still retried after a 5xx (chat.update, reads)', async () => {
    const slack = await fakeSlack();
    const client = slackClient({ apiUrl: slack.url });
    const posted = await client.chat.postMessage({ channel: CHANNEL, text: 'first' });
    slack.failNext('chat.update', { status: 502 });
    slack.failNext('conversations.replies', { status: 503 });

    await client.chat.update({ channel: CHANNEL, ts: posted.ts as string, text: 'second' });
    const replies = await client.conversations.replies({ channel: CHANNEL, ts: posted.ts as string });

    expect(postedTexts(slack)).toEqual(['second']);
    expect(replies.messages?.map((message) => message.text)).toEqual(['second']);
    expect(slack.callsTo('chat.update')).toHaveLength(2);
  });
});
