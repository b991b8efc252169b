import { LogLevel, WebClient } from '@slack/web-api';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { makeStep } from '../approvals/pending-step.test-support.js';
import { SlackCallError } from '../errors/countersign-error.js';
import { SLACK_RETRY_CONFIG } from './create-slack-app.js';
import { createUnrepeatedSlackWrites } from './unrepeated-slack-writes.js';
import { createWebApiMessenger } from './web-api-messenger.js';

/** Every Web API call answered with this HTTP status (an edge or proxy refusing the request), or failing as `fetch` does when a connection is lost. */
function messengerAnswering(status: number | 'connection lost', { retries }: { retries?: number } = {}) {
  const fetch: typeof globalThis.fetch = async () => {
    if (status === 'connection lost') throw new TypeError('fetch failed', { cause: new Error('other side closed') });
    return new Response('refused', { status });
  };
  const writes = createUnrepeatedSlackWrites({ retryConfig: retries === undefined ? SLACK_RETRY_CONFIG : { retries }, fetch });
  const client = new WebClient('xoxb-test', { slackApiUrl: 'http://127.0.0.1:9/api/', retryConfig: writes.retryConfig, timeout: 300, fetch: writes.fetch, logLevel: LogLevel.ERROR });
  return createWebApiMessenger({ client, logger: pino({ level: 'silent' }) } as never);
}

async function tryLaterOf(promise: Promise<unknown>): Promise<boolean | string> {
  return promise.then(
    () => 'posted',
    (error: unknown) => (error instanceof SlackCallError ? error.tryLater : `not a SlackCallError: ${String(error)}`),
  );
}

/**
 * post-failure.ts: a failure is worth trying later when Slack failed (5xx, 429), "not when Slack
 * refused it" (an HTTP 404 is not: `slack_webapi_http_error`, 404 → false). chat.postMessage goes
 * through the unrepeated-writes guard, which once turned every status other than 200/429 into a "may
 * have been applied" request error, so a reminder refused with a 4xx was tried again every 2–15
 * minutes until the request expired. A 4xx on a post is now classified as the same refusal on a read.
 */
describe('a reminder post refused with an HTTP 4xx', () => {
  it.each([403, 404])('is classified like the same refusal of a read (%i): not worth trying later', async (status) => {
    const messenger = messengerAnswering(status);
    const read = await tryLaterOf(messenger.postMention({ channel: 'C0OPS', threadTs: '1.1', text: 'hi', unlessPostedAfter: '1.1' }));
    const post = await tryLaterOf(messenger.postMention({ channel: 'C0OPS', threadTs: '1.1', text: 'hi' }));
    expect(read).toBe(false);
    expect(post, `HTTP ${status} on chat.postMessage is taken as worth trying later`).toBe(false);
  });

  // The guard still will not send such a post again (Slack may have posted it): a later try reads first.
  it.each([500, 502, 408, 'connection lost' as const])('is still worth trying later when Slack or the network failed it (%s)', async (status) => {
    const messenger = messengerAnswering(status);
    expect(await tryLaterOf(messenger.postMention({ channel: 'C0OPS', threadTs: '1.1', text: 'hi' }))).toBe(true);
  });
});

/**
 * A copy's chat.update failing is classified as the thread card's is: `showStep` has the copy drawn
 * again later only when Slack failed it for now; thrown as it came, no copy failure was ever retried.
 */
describe("a card copy's update that fails", () => {
  it.each([
    [503, true],
    [500, true],
    [404, false],
  ])('is a SlackCallError saying whether a later try may get past it (HTTP %i: %s)', async (status, tryLater) => {
    const messenger = messengerAnswering(status, { retries: 0 });
    const step = makeStep(['apv-1']);
    expect(await tryLaterOf(messenger.updateStepCopy({ step, copy: { kind: 'channel', channel: 'C0APPROVALS', ts: '2.2' } }))).toBe(tryLater);
  });
});
