import { LogLevel, WebClient } from '@slack/web-api';
import { afterEach, describe, expect, it } from 'vitest';
import { startFakeSlackApi, type FakeSlackApi } from '../../test/helpers/fake-slack-api.js';
import { sharedLeanFetch } from '../http/lean-fetch.js';
import { slackTransport } from './create-slack-app.js';
import { retryAfterMsOf } from './retry-after.js';

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

/** The client as the app builds it (`slackTransport`); `pause`, its waits for a rate limit. */
function slackClient(apiUrl: string, pause?: (ms: number) => Promise<void>): WebClient {
  return new WebClient('xoxb-test', { slackApiUrl: apiUrl, ...slackTransport({ fetch: sharedLeanFetch(), ...(pause ? { pause } : {}) }), timeout: 5_000, logLevel: LogLevel.ERROR });
}

describe('a rate-limited Slack call', () => {
  it('holds back no call of another method while it waits out its Retry-After, and is then made again', async () => {
    const slack = await fakeSlack();
    const posted = await slackClient(slack.url).chat.postMessage({ channel: CHANNEL, text: 'the card' });
    // Ten minutes: had the client paused its queue, the post below would wait them out.
    slack.failNext('chat.update', { status: 429, retryAfterSeconds: 600 });
    let released!: () => void;
    const waiting = new Promise<void>((resolve) => {
      released = resolve;
    });
    let paused!: () => void;
    const pausedNow = new Promise<void>((resolve) => {
      paused = resolve;
    });
    const client = slackClient(slack.url, async (ms) => {
      expect(ms).toBe(600_000);
      paused();
      await waiting;
    });
    const update = client.chat.update({ channel: CHANNEL, ts: posted.ts!, text: 'the card, decided' });
    await pausedNow;
    await client.chat.postMessage({ channel: CHANNEL, thread_ts: posted.ts!, text: 'the answer' });
    expect(slack.messages(CHANNEL, posted.ts!).map((message) => message.text)).toContain('the answer');
    released();
    await update;
    expect(slack.messages(CHANNEL).find((message) => message.ts === posted.ts)?.text).toBe('the card, decided');
  });

  it('is rejected at once, with the wait Slack asked for, when it is the status line', async () => {
    const slack = await fakeSlack();
    slack.failNext('assistant.threads.setStatus', { status: 429, retryAfterSeconds: 600 });
    const error = await slackClient(slack.url)
      .assistant.threads.setStatus({ channel_id: CHANNEL, thread_ts: '1.1', status: 'is thinking…' })
      .then(
        () => undefined,
        (rejected: unknown) => rejected,
      );
    expect(retryAfterMsOf(error)).toBe(600_000);
    expect(slack.callsTo('assistant.threads.setStatus')).toHaveLength(1);
  });

  it('gives up after the client\'s tries, saying how long Slack asked for', async () => {
    const slack = await fakeSlack();
    const client = slackClient(slack.url, async () => {});
    slack.failNext('chat.update', { status: 429, retryAfterSeconds: 7 }, 3);
    const error = await client.chat.update({ channel: CHANNEL, ts: '1.1', text: 'x' }).then(
      () => undefined,
      (rejected: unknown) => rejected,
    );
    expect(retryAfterMsOf(error)).toBe(7_000);
    expect(slack.callsTo('chat.update')).toHaveLength(3);
  });
});
