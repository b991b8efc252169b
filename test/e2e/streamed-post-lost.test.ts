import { afterEach, describe, expect, it } from 'vitest';
import { startFakeSlackApi } from '../helpers/fake-slack-api.js';
import { startFlakySlackEdge } from '../helpers/flaky-slack-edge.js';
import { BOT_USER_ID, CHANNEL, TEAM_ID, nextTs, useHarnesses } from './harness.js';

const closeAfter: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closeAfter.splice(0).reverse()) await close();
});
const harness = useHarnesses();

describe('a streamed answer whose first post Slack applied but whose reply was lost (502)', () => {
  it('is not posted a second time: the thread shows the answer once', async () => {
    const slack = await startFakeSlackApi({ botUserId: BOT_USER_ID, teamId: TEAM_ID });
    closeAfter.push(() => slack.close());
    const answer = 'The worker in staging restarted cleanly and all twelve pods report ready again after the rollout finished.';
    // The first words of the streamed answer reach Slack, but the edge answers 502.
    const edge = await startFlakySlackEdge(slack, { method: 'chat.postMessage', lost: 'bad-gateway', matches: (form) => answer.startsWith(form.get('text') ?? '\u0000') && form.get('text') !== answer });
    closeAfter.push(() => edge.close());
    const h = await harness({ environment: { SLACK_API_URL: edge.url } });
    h.openai.enqueue({ text: answer, deltaDelayMs: 120 });
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'how did the restart go?', ts: threadTs });
    await h.settled({ timeoutMs: 20_000 });

    const replies = slack.messages(CHANNEL, threadTs).filter((message) => message.ts !== threadTs);
    // README: a post that Slack may have applied (a 5xx) is not sent again; streamed text included.
    const answerMessages = replies.filter((message) => message.text.length > 0 && answer.startsWith(message.text.slice(0, 12)));
    expect(answerMessages.map((message) => message.text)).toEqual([answer]);
  }, 40_000);

  it('native streaming: a chat.startStream Slack applied but answered 502 for is not followed by a second copy', async () => {
    const slack = await startFakeSlackApi({ botUserId: BOT_USER_ID, teamId: TEAM_ID });
    closeAfter.push(() => slack.close());
    const edge = await startFlakySlackEdge(slack, { method: 'chat.startStream', lost: 'bad-gateway' });
    closeAfter.push(() => edge.close());
    const h = await harness({ environment: { SLACK_API_URL: edge.url, SLACK_STREAMING: 'native' } });
    const answer = 'Status of the rollout:\n- api: healthy\n- worker: restarted 2 minutes ago\nNothing else needs attention.';
    h.openai.enqueue({ text: answer, deltaDelayMs: 80 });
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'rollout status?', ts: threadTs });
    await h.settled({ timeoutMs: 20_000 });

    const replies = slack.messages(CHANNEL, threadTs).filter((message) => message.ts !== threadTs);
    expect(replies.map((message) => message.text).filter((text) => text.startsWith('Status of the rollout'))).toEqual([answer]);
  }, 40_000);
});
