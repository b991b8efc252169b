import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startSlackEmulator, type SlackEmulator } from '../slack-emulator.js';

/** What Slack does with messages posted to a response_url (Bolt's respond()), per its flags. */
describe('response_url answers', () => {
  let emulator: SlackEmulator;

  beforeAll(async () => {
    emulator = await startSlackEmulator();
  });
  beforeEach(() => emulator.state.clear());
  afterAll(async () => {
    await emulator.close();
  });

  function botMessage(text: string) {
    return emulator.state.messages.store({ channel: 'C1', ts: emulator.state.nextTs(), user: 'U07OPSBOT1', bot_id: 'B07OPSBOT1', text, thread_ts: '1.000001' });
  }

  async function respond(source: { kind: 'message'; ts: string } | undefined, body: object): Promise<Response> {
    const id = emulator.state.handles.addResponseTarget({ channel: 'C1', user: 'U_BOB', threadTs: '1.000001', ...(source ? { source } : {}) });
    return fetch(emulator.responseUrl(id), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  }

  it('shows a plain answer only to the person who acted, in their thread', async () => {
    expect((await respond(undefined, { text: 'only for you' })).status).toBe(200);
    expect(emulator.state.ephemerals.list()).toMatchObject([{ user: 'U_BOB', channel: 'C1', threadTs: '1.000001', text: 'only for you' }]);
    expect(emulator.state.messages.all()).toEqual([]);
  });

  it('posts an in_channel answer as the bot', async () => {
    await respond(undefined, { text: 'for everyone', response_type: 'in_channel' });
    expect(emulator.state.messages.all()).toMatchObject([{ user: 'U07OPSBOT1', bot_id: 'B07OPSBOT1', text: 'for everyone', thread_ts: '1.000001' }]);
  });

  it('replaces or deletes the message the interaction came from', async () => {
    const card = botMessage('Approve?');
    await respond({ kind: 'message', ts: card.ts }, { replace_original: true, text: 'Approved', blocks: [{ type: 'divider' }] });
    expect(emulator.state.messages.find({ channel: 'C1', ts: card.ts })).toMatchObject({ text: 'Approved', blocks: [{ type: 'divider' }] });
    await respond({ kind: 'message', ts: card.ts }, { delete_original: true });
    expect(emulator.state.messages.all()).toEqual([]);
  });

  it('answers 404 for a response_url it never handed out', async () => {
    const response = await fetch(emulator.responseUrl('R404'), { method: 'POST', body: '{}' });
    expect(response.status).toBe(404);
  });
});
