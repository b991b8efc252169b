import { describe, expect, it } from 'vitest';
import { createObservedSlackFetch, type SlackApiFailure } from './observed-slack-fetch.js';

const json = (body: unknown, status = 200) => new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json; charset=utf-8' } });

describe('observed Slack fetch', () => {
  it("reports an `ok: false` answer and still hands the client the body it reports from", async () => {
    const failures: SlackApiFailure[] = [];
    const fetch = createObservedSlackFetch({ onFailure: (failure) => failures.push(failure), fetch: async () => json({ ok: false, error: 'channel_not_found' }) });
    const response = await fetch('https://slack.com/api/chat.postMessage', { method: 'POST' });
    expect(failures).toEqual([{ method: 'chat.postMessage', error: 'channel_not_found' }]);
    expect(JSON.parse(await response.text())).toEqual({ ok: false, error: 'channel_not_found' });
    expect(await response.json()).toEqual({ ok: false, error: 'channel_not_found' });
    expect(response.headers.get('content-type')).toContain('application/json');
  });

  it('reports nothing for a good answer, and counts HTTP failures by status', async () => {
    const failures: SlackApiFailure[] = [];
    const replies = [json({ ok: true, ts: '1.2' }), new Response('busy', { status: 503 })];
    const fetch = createObservedSlackFetch({ onFailure: (failure) => failures.push(failure), fetch: async () => replies.shift()! });
    expect(await (await fetch('https://slack.com/api/chat.update')).json()).toEqual({ ok: true, ts: '1.2' });
    expect(await (await fetch('https://slack.com/api/chat.update')).text()).toBe('busy');
    expect(failures).toEqual([{ method: 'chat.update', error: 'http_503' }]);
  });
});
