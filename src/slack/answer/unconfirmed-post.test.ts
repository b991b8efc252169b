import { LogLevel, WebClient } from '@slack/web-api';
import { afterEach, describe, expect, it } from 'vitest';
import { startFakeSlackApi } from '../../../test/helpers/fake-slack-api.js';
import { sendWellFormedSlackArguments } from '../well-formed-web-client.js';
import { findUnconfirmedPost, laterTs } from './unconfirmed-post.js';

const CHANNEL = 'C0OPS0001';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe('finding a post whose reply was lost', () => {
  it('tells apart two posts of the same text by what their blocks carry (two cards of one tool)', async () => {
    const slack = await startFakeSlackApi({ botUserId: 'UBOT0001', teamId: 'T0TEAM001' });
    cleanups.push(() => slack.close());
    const client = new WebClient('xoxb-test', { slackApiUrl: slack.url, logLevel: LogLevel.ERROR });
    const thread = await client.chat.postMessage({ channel: CHANNEL, text: 'restart things' });
    const card = (stepId: string) => ({
      channel: CHANNEL,
      thread_ts: thread.ts!,
      text: 'Approval needed: restart_service',
      blocks: [{ type: 'actions' as const, elements: [{ type: 'button' as const, action_id: 'countersign_approve', text: { type: 'plain_text' as const, text: 'Approve' }, value: `${stepId}:apv-1:v0` }] }],
    });
    const first = await client.chat.postMessage(card('step-one'));
    await client.chat.postMessage(card('step-two'));
    const post = { text: 'Approval needed: restart_service', after: '0', carrying: 'step-one' };
    expect(await findUnconfirmedPost({ client, channel: CHANNEL, threadTs: thread.ts!, post, known: [] })).toBe(first.ts);
    expect(await findUnconfirmedPost({ client, channel: CHANNEL, threadTs: thread.ts!, post: { ...post, carrying: 'step-three' }, known: [] })).toBeUndefined();
  });

  it('finds a post whose text held a lone surrogate, which Slack was sent as U+FFFD', async () => {
    const slack = await startFakeSlackApi({ botUserId: 'UBOT0001', teamId: 'T0TEAM001' });
    cleanups.push(() => slack.close());
    sendWellFormedSlackArguments();
    const client = new WebClient('xoxb-test', { slackApiUrl: slack.url, logLevel: LogLevel.ERROR });
    const thread = await client.chat.postMessage({ channel: CHANNEL, text: 'status?' });
    const posted = await client.chat.postMessage({ channel: CHANNEL, thread_ts: thread.ts!, text: 'Deployed the api \ud83d' });
    const post = { text: 'Deployed the api \ud83d', after: '0' };
    expect(await findUnconfirmedPost({ client, channel: CHANNEL, threadTs: thread.ts!, post, known: [] })).toBe(posted.ts);
  });

  it('bounds a post by the later of two timestamps, compared exactly (not as floats)', () => {
    expect(laterTs('1800000000.000100', '1800000000.000099')).toBe('1800000000.000100');
    expect(laterTs('1799999999.999999', '1800000000.000001')).toBe('1800000000.000001');
  });
});
