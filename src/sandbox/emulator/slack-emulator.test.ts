import { request } from 'node:http';
import { ErrorCode, WebClient, type WebAPIPlatformError } from '@slack/web-api';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { quietSlackLogger } from '../../../test/helpers/quiet-slack-logger.js';
import { startSlackEmulator, type SlackCall, type SlackEmulator } from './slack-emulator.js';

describe('the Slack emulator driven by the real WebClient', () => {
  let emulator: SlackEmulator;
  let client: WebClient;
  const calls: SlackCall[] = [];

  beforeAll(async () => {
    emulator = await startSlackEmulator();
    emulator.onCall((call) => calls.push(call));
    client = new WebClient('xoxb-test', { slackApiUrl: emulator.url, retryConfig: { retries: 0 }, logger: quietSlackLogger });
  });
  beforeEach(() => {
    calls.length = 0;
    emulator.state.clear();
  });
  afterAll(async () => {
    await emulator.close();
  });

  const addHumanMessage = (channel: string, text: string) => emulator.state.messages.store({ channel, ts: emulator.state.nextTs(), user: 'U_ALICE', text });
  const messages = (channel: string) => emulator.state.messages.inChannel(channel);

  it('answers auth.test with the bot identity', async () => {
    const result = await client.auth.test();
    expect(result).toMatchObject({ ok: true, user_id: 'U07OPSBOT1', bot_id: 'B07OPSBOT1', team_id: 'T0A1B2C3D' });
    expect(calls[0]?.token).toBe('xoxb-test');
  });

  it('round-trips postMessage, update and replies in a seeded thread', async () => {
    const parent = addHumanMessage('C1', '<@U07OPSBOT1> restart payments');
    const posted = await client.chat.postMessage({
      channel: 'C1',
      thread_ts: parent.ts,
      text: 'Approval needed',
      blocks: [{ type: 'section', text: { type: 'mrkdwn', text: '*Approve?*' } }],
    });
    expect(posted.ts).toMatch(/^\d+\.\d{6}$/);
    expect(posted.message?.bot_id).toBe('B07OPSBOT1');
    expect(calls[0]?.args.blocks).toEqual([{ type: 'section', text: { type: 'mrkdwn', text: '*Approve?*' } }]);

    await client.chat.update({ channel: 'C1', ts: posted.ts ?? '', text: 'Approved by <@U_BOB>', blocks: [] });
    const replies = await client.conversations.replies({ channel: 'C1', ts: parent.ts });
    expect(replies.messages?.map((message) => message.text)).toEqual(['<@U07OPSBOT1> restart payments', 'Approved by <@U_BOB>']);
    expect(emulator.state.messages.thread({ channel: 'C1', threadTs: parent.ts }).map((message) => message.blocks)).toEqual([undefined, []]);
    expect(messages('C1')[1]?.edited).toMatchObject({ user: 'U07OPSBOT1' });
  });

  it('lists only the replies after `oldest`', async () => {
    const parent = addHumanMessage('C1', '<@U07OPSBOT1> status?');
    const first = await client.chat.postMessage({ channel: 'C1', thread_ts: parent.ts, text: 'first' });
    await client.chat.postMessage({ channel: 'C1', thread_ts: parent.ts, text: 'second' });
    const replies = await client.conversations.replies({ channel: 'C1', ts: parent.ts, oldest: first.ts ?? '' });
    expect(replies.messages?.map((message) => message.text)).toEqual(['second']);
  });

  it('answers message_not_found for an unknown ts on chat.update', async () => {
    const error = await client.chat.update({ channel: 'C1', ts: '1.000001', text: 'x' }).catch((caught: unknown) => caught);
    expect((error as WebAPIPlatformError).code).toBe(ErrorCode.PlatformError);
    expect((error as WebAPIPlatformError).data.error).toBe('message_not_found');
  });

  it('rejects 51 blocks and over-long text as invalid_blocks', async () => {
    const blocks = Array.from({ length: 51 }, () => ({ type: 'divider' as const }));
    await expect(client.chat.postMessage({ channel: 'C1', text: 'x', blocks })).rejects.toMatchObject({ data: { error: 'invalid_blocks' } });
    const longSection = [{ type: 'section' as const, text: { type: 'mrkdwn' as const, text: 'a'.repeat(3001) } }];
    await expect(client.chat.postMessage({ channel: 'C1', text: 'x', blocks: longSection })).rejects.toMatchObject({
      data: { error: 'invalid_blocks', errors: ['must be less than 3001 characters [json-pointer:/blocks/0/text/text]'] },
    });
    expect(messages('C1')).toEqual([]);
  });

  it('rejects a message whose blocks hold more than 12,000 characters of text in all as msg_blocks_too_long', async () => {
    const sections = (count: number) => Array.from({ length: count }, () => ({ type: 'section' as const, text: { type: 'mrkdwn' as const, text: 'a'.repeat(3000) } }));
    await expect(client.chat.postMessage({ channel: 'C1', text: 'x', blocks: sections(5) })).rejects.toMatchObject({ data: { error: 'msg_blocks_too_long' } });
    const posted = await client.chat.postMessage({ channel: 'C1', text: 'x', blocks: sections(4) });
    await expect(client.chat.update({ channel: 'C1', ts: posted.ts ?? '', text: 'x', blocks: [...sections(4), { type: 'context', elements: [{ type: 'mrkdwn', text: 'b' }] }] })).rejects.toMatchObject({
      data: { error: 'msg_blocks_too_long' },
    });
    expect(messages('C1').map((message) => message.blocks?.length)).toEqual([4]);
  });

  it('streams a message through chat.startStream/appendStream/stopStream, marked as streaming until stopped', async () => {
    const streamer = client.chatStream({ channel: 'C1', thread_ts: '1.000001', recipient_team_id: 'T0A1B2C3D', recipient_user_id: 'U_ALICE', buffer_size: 1 });
    await streamer.append({ markdown_text: 'Hello' });
    const [open] = messages('C1');
    expect(open && emulator.state.messages.isStreaming(open)).toBe(true);
    await streamer.append({ markdown_text: ', world' });
    await streamer.stop({ blocks: [{ type: 'context', elements: [{ type: 'mrkdwn', text: 'done' }] }] });
    const [message] = messages('C1');
    expect(message).toMatchObject({ text: 'Hello, world', thread_ts: '1.000001', blocks: [{ type: 'context' }], format: 'markdown' });
    expect(emulator.state.messages.isStreaming(message!)).toBe(false);
    // Slack's own message objects have no such field: only the page reads it.
    const replies = await client.conversations.replies({ channel: 'C1', ts: '1.000001' });
    expect(replies.messages?.find((reply) => reply.ts === message?.ts)).not.toHaveProperty('format');
    await expect(client.chat.appendStream({ channel: 'C1', ts: message?.ts ?? '', markdown_text: 'late' })).rejects.toMatchObject({
      data: { error: 'message_not_in_streaming_state' },
    });
  });

  it('opens views once per trigger id, on the screen of the user the trigger was issued to', async () => {
    const view = { type: 'modal' as const, callback_id: 'edit', title: { type: 'plain_text' as const, text: 'Edit' }, blocks: [] };
    const triggerId = emulator.state.handles.issueTrigger('U_BOB');
    const opened = await client.views.open({ trigger_id: triggerId, view });
    expect(opened.view).toMatchObject({ id: expect.stringMatching(/^V/), callback_id: 'edit', hash: expect.any(String) });
    expect(emulator.state.views.list()).toMatchObject([{ viewId: opened.view?.id, user: 'U_BOB' }]);
    await expect(client.views.open({ trigger_id: triggerId, view })).rejects.toMatchObject({ data: { error: 'exchanged_trigger_id' } });
    await expect(client.apiCall('no.such.method')).rejects.toMatchObject({ data: { error: 'unknown_method' } });
  });

  it('stacks pushed views and refuses an update with a stale hash', async () => {
    const view = (title: string) => ({ type: 'modal' as const, title: { type: 'plain_text' as const, text: title }, blocks: [] });
    const first = await client.views.open({ trigger_id: emulator.state.handles.issueTrigger('U_BOB'), view: view('First') });
    const second = await client.views.push({ trigger_id: emulator.state.handles.issueTrigger('U_BOB'), view: view('Second') });
    expect(second.view).toMatchObject({ previous_view_id: first.view?.id });
    await client.views.update({ view_id: first.view?.id ?? '', hash: first.view?.hash ?? '', view: view('First, again') });
    await expect(client.views.update({ view_id: first.view?.id ?? '', hash: first.view?.hash ?? '', view: view('Stale') })).rejects.toMatchObject({
      data: { error: 'hash_conflict' },
    });
    expect(emulator.state.views.list().map((stored) => (stored.view.title as { text: string }).text)).toEqual(['First, again', 'Second']);
  });

  it('answers usergroups.users.list from configured members', async () => {
    emulator.state.usergroupUsers.set('S_APPROVERS', ['U_BOB']);
    await expect(client.usergroups.users.list({ usergroup: 'S_APPROVERS' })).resolves.toMatchObject({ users: ['U_BOB'] });
    await expect(client.usergroups.users.list({ usergroup: 'S_OTHER' })).resolves.toMatchObject({ users: [] });
  });

  it('keeps one Home view per user: publishing again replaces it under the same id', async () => {
    const home = (text: string) => ({ type: 'home' as const, blocks: [{ type: 'section' as const, text: { type: 'mrkdwn' as const, text } }] });
    const first = await client.views.publish({ user_id: 'U_BOB', view: home('one') });
    const second = await client.views.publish({ user_id: 'U_BOB', view: home('two') });
    await client.views.publish({ user_id: 'U_CAROL', view: home('carol') });
    expect(second.view?.id).toBe(first.view?.id);
    const homes = emulator.state.views.list().filter((stored) => stored.view.type === 'home');
    expect(homes.map((stored) => stored.user)).toEqual(['U_BOB', 'U_CAROL']);
    expect(JSON.stringify(homes[0]?.view.blocks)).toContain('two');
  });

  it('answers users.conversations with every known channel, or only those a member list includes the user in', async () => {
    addHumanMessage('C1', 'hi');
    addHumanMessage('C2', 'hi');
    emulator.state.channelMembers.set('C2', new Set(['U_ALICE']));
    const channelsOf = async (user: string) => ((await client.users.conversations({ user })).channels ?? []).map((channel) => channel.id);
    expect(await channelsOf('U_ALICE')).toEqual(['C1', 'C2']);
    expect(await channelsOf('U_BOB')).toEqual(['C1']);
  });

  it('deletes own messages, keeps ephemerals for their user out of history and refuses duplicate reactions', async () => {
    const human = addHumanMessage('C1', 'hi');
    const posted = await client.chat.postMessage({ channel: 'C1', text: 'temporary' });
    await client.chat.delete({ channel: 'C1', ts: posted.ts ?? '' });
    await expect(client.chat.delete({ channel: 'C1', ts: human.ts })).rejects.toMatchObject({ data: { error: 'cant_delete_message' } });
    const ephemeral = await client.chat.postEphemeral({ channel: 'C1', user: 'U_BOB', thread_ts: human.ts, text: 'not yours' });
    expect(emulator.state.ephemerals.list()).toMatchObject([{ id: ephemeral.message_ts, user: 'U_BOB', channel: 'C1', threadTs: human.ts, text: 'not yours' }]);
    expect(messages('C1').map((message) => message.text)).toEqual(['hi']);
    await client.reactions.add({ channel: 'C1', timestamp: human.ts, name: 'eyes' });
    await expect(client.reactions.add({ channel: 'C1', timestamp: human.ts, name: 'eyes' })).rejects.toMatchObject({ data: { error: 'already_reacted' } });
  });

  it('keeps a thread status until the bot replies in the thread, and announces every change', async () => {
    let changes = 0;
    const unsubscribe = emulator.state.onChange(() => (changes += 1));
    const parent = addHumanMessage('C1', 'help');
    await client.assistant.threads.setStatus({ channel_id: 'C1', thread_ts: parent.ts, status: 'is thinking…' });
    expect(Object.fromEntries(emulator.state.statuses)).toEqual({ [`C1:${parent.ts}`]: 'is thinking…' });
    await client.chat.postMessage({ channel: 'C1', thread_ts: parent.ts, text: 'done' });
    expect(emulator.state.statuses.size).toBe(0);
    unsubscribe();
    expect(changes).toBeGreaterThanOrEqual(3);
  });

  it('links permalinks to the workspace URL', async () => {
    const human = addHumanMessage('C1', 'hi');
    emulator.state.profile.url = 'http://localhost:3000/';
    const link = await client.chat.getPermalink({ channel: 'C1', message_ts: human.ts });
    expect(link.permalink).toBe(`http://localhost:3000/archives/C1/p${human.ts.replace('.', '')}`);
  });

  it('accepts JSON bodies and records the bearer token', async () => {
    const response = await fetch(`${emulator.url}chat.postMessage`, {
      method: 'POST',
      headers: { 'content-type': 'application/json; charset=utf-8', authorization: 'Bearer xoxb-json' },
      body: JSON.stringify({ channel: 'C2', text: 'json', blocks: [{ type: 'divider' }] }),
    });
    expect(await response.json()).toMatchObject({ ok: true, channel: 'C2' });
    expect(calls[0]).toMatchObject({ token: 'xoxb-json', args: { blocks: [{ type: 'divider' }] } });
  });
});

describe('the Slack emulator and callers other than the bot', () => {
  const BOT_TOKEN = 'xoxb-the-bots-own';
  let emulator: SlackEmulator;
  let port: number;

  beforeAll(async () => {
    emulator = await startSlackEmulator({ botToken: BOT_TOKEN });
    port = Number(new URL(emulator.url).port);
  });
  afterAll(async () => {
    await emulator.close();
  });

  /** A raw request, so the Host header is the test's to choose (fetch sets its own). */
  function post(options: { path: string; headers: Record<string, string>; body: string }): Promise<{ status: number; body: any }> {
    return new Promise((resolve, reject) => {
      const outgoing = request({ host: '127.0.0.1', port, method: 'POST', path: options.path, headers: options.headers }, (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) }));
      });
      outgoing.on('error', reject);
      outgoing.end(options.body);
    });
  }
  const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString();

  it('answers the bot: its token, under 127.0.0.1 or localhost, with no Origin', async () => {
    const client = new WebClient(BOT_TOKEN, { slackApiUrl: emulator.url, retryConfig: { retries: 0 }, logger: quietSlackLogger });
    await expect(client.auth.test()).resolves.toMatchObject({ ok: true });
    const viaLocalhost = await post({ path: '/api/auth.test', headers: { host: `localhost:${port}`, authorization: `Bearer ${BOT_TOKEN}` }, body: '' });
    expect(viaLocalhost.body).toMatchObject({ ok: true });
  });

  it('refuses calls without the bot token as Slack does: not_authed, invalid_auth', async () => {
    const missing = await post({ path: '/api/chat.postMessage', headers: { host: `127.0.0.1:${port}`, 'content-type': 'text/plain' }, body: form({ channel: 'C1', text: 'forged' }) });
    const wrong = await post({ path: '/api/chat.postMessage', headers: { host: `127.0.0.1:${port}` }, body: form({ token: 'xoxb-sandbox', channel: 'C1', text: 'forged' }) });
    expect([missing.body.error, wrong.body.error]).toEqual(['not_authed', 'invalid_auth']);
    expect(emulator.state.messages.inChannel('C1')).toEqual([]);
  });

  it('refuses web pages (any Origin) and other host names (DNS rebinding), even with the token', async () => {
    const headers = { authorization: `Bearer ${BOT_TOKEN}` };
    const crossSite = await post({ path: '/api/chat.postMessage', headers: { ...headers, host: `127.0.0.1:${port}`, origin: 'https://evil.example' }, body: form({ channel: 'C1', text: 'forged' }) });
    const rebound = await post({ path: '/api/chat.postMessage', headers: { ...headers, host: `rebind.evil.example:${port}` }, body: form({ channel: 'C1', text: 'forged' }) });
    expect([crossSite.status, rebound.status]).toEqual([403, 421]);
    expect(emulator.state.messages.inChannel('C1')).toEqual([]);
  });

  it('hands out response_urls no one can guess from the last one', () => {
    const first = emulator.state.handles.addResponseTarget({ channel: 'C1', user: 'U_ALICE' });
    const second = emulator.state.handles.addResponseTarget({ channel: 'C1', user: 'U_ALICE' });
    expect([first, second]).toEqual([expect.stringMatching(/^R[0-9a-f]{32}$/), expect.stringMatching(/^R[0-9a-f]{32}$/)]);
    expect(first).not.toBe(second);
  });
});
