import type { AddressInfo } from 'node:net';
import { App, LogLevel, type BlockAction, type StaticSelectAction } from '@slack/bolt';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startSlackEmulator, type SlackEmulator } from '../slack-emulator.js';
import { createSlackDelivery, type SlackDelivery } from './slack-delivery.js';

const SIGNING_SECRET = 'delivery-test-secret';

/**
 * Deliveries against a real Bolt App: what a person does in the emulated workspace reaches the
 * listeners as Slack's requests, and the app's answers (acks, views, respond()) land in the
 * workspace as they would in Slack.
 */
describe('delivering what people do to a real Bolt App', () => {
  let emulator: SlackEmulator;
  let app: App;
  let delivery: SlackDelivery;
  const received: Array<{ kind: string; body: any }> = [];

  beforeAll(async () => {
    emulator = await startSlackEmulator();
    app = new App({
      signingSecret: SIGNING_SECRET,
      token: 'xoxb-test',
      botId: emulator.state.identity.botId,
      botUserId: emulator.state.identity.botUserId,
      logLevel: LogLevel.ERROR,
      clientOptions: { slackApiUrl: emulator.url, retryConfig: { retries: 0 } },
    });
    app.event('app_mention', async ({ event }) => void received.push({ kind: 'app_mention', body: event }));
    app.message(async ({ message }) => void received.push({ kind: 'message', body: message }));
    app.action('open_form', async ({ ack, body, client }) => {
      await ack();
      await client.views.open({ trigger_id: (body as BlockAction).trigger_id, view: formView('Form') });
    });
    app.action<BlockAction<StaticSelectAction>>('pick', async ({ ack, action, respond, body }) => {
      await ack();
      received.push({ kind: 'pick', body });
      await respond({ text: `picked ${action.selected_option.value}` });
    });
    app.view('form', async ({ ack, view }) => {
      const wanted = view.state.values.choice?.value?.value;
      if (wanted === 'errors') return ack({ response_action: 'errors', errors: { choice: 'not that one' } });
      if (wanted === 'update') return ack({ response_action: 'update', view: formView('Updated') });
      if (wanted === 'push') return ack({ response_action: 'push', view: formView('Pushed') });
      if (wanted === 'clear') return ack({ response_action: 'clear' });
      await ack();
    });
    app.view({ callback_id: 'form', type: 'view_closed' }, async ({ ack, body }) => {
      await ack();
      received.push({ kind: 'view_closed', body });
    });
    app.command('/countersign', async ({ ack, respond, command }) => {
      await ack(`you said ${command.text}`);
      await respond({ response_type: 'in_channel', text: 'for everyone' });
    });
    const server = await app.start({ port: 0, host: '127.0.0.1' });
    const receiverUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/slack/events`;
    delivery = createSlackDelivery({ emulator, receiverUrl, signingSecret: SIGNING_SECRET });
  });
  beforeEach(() => {
    received.length = 0;
    emulator.state.clear();
  });
  afterAll(async () => {
    await app.stop();
    await emulator.close();
  });

  function formView(title: string) {
    return {
      type: 'modal' as const,
      callback_id: 'form',
      notify_on_close: true,
      title: { type: 'plain_text' as const, text: title },
      submit: { type: 'plain_text' as const, text: 'Send' },
      blocks: [{ type: 'input' as const, block_id: 'choice', label: { type: 'plain_text' as const, text: 'Choice' }, element: { type: 'plain_text_input' as const, action_id: 'value' } }],
    };
  }

  const waitUntil = async (check: () => boolean) => {
    while (!check()) await new Promise((resolve) => setTimeout(resolve, 10));
  };

  async function openForm(user: string): Promise<string> {
    const posted = await app.client.chat.postMessage({
      channel: 'C1',
      text: 'form',
      blocks: [{ type: 'actions', block_id: 'form_actions', elements: [{ type: 'button', action_id: 'open_form', text: { type: 'plain_text', text: 'Open' }, value: 'x' }] }],
    });
    await delivery.clickAction({ user, channel: 'C1', container: { type: 'message', messageTs: posted.ts ?? '' }, blockId: 'form_actions', actionId: 'open_form', element: { type: 'button', value: 'x' } });
    await waitUntil(() => emulator.state.views.list().some((stored) => stored.user === user));
    return emulator.state.views.list().find((stored) => stored.user === user)!.viewId;
  }

  const submit = (viewId: string, value: string) => delivery.submitView({ user: 'U_BOB', viewId, values: { choice: { value: { type: 'plain_text_input', value } } } });
  const titles = () => emulator.state.views.list().map((stored) => (stored.view.title as { text: string }).text);

  it('stores a mention and delivers both app_mention and message', async () => {
    const { ts } = await delivery.postMessage({ user: 'U_ALICE', channel: 'C1', text: `<@${emulator.state.identity.botUserId}> hello` });
    expect(emulator.state.messages.find({ channel: 'C1', ts })).toMatchObject({ user: 'U_ALICE' });
    await waitUntil(() => received.length === 2);
    expect(received.map((entry) => entry.kind).sort()).toEqual(['app_mention', 'message']);
    expect(received.every((entry) => entry.body.ts === ts)).toBe(true);
  });

  it('applies errors, update, push and clear from the submission ack the way Slack does', async () => {
    const viewId = await openForm('U_BOB');
    await expect(submit(viewId, 'errors')).resolves.toEqual({ ok: true, outcome: 'errors', errors: { choice: 'not that one' } });
    expect(emulator.state.views.find(viewId)).toMatchObject({ errors: { choice: 'not that one' }, values: { choice: { value: { value: 'errors' } } } });
    await expect(submit(viewId, 'update')).resolves.toEqual({ ok: true, outcome: 'updated' });
    expect(titles()).toEqual(['Updated']);
    expect(emulator.state.views.find(viewId)?.errors).toBeUndefined();
    await expect(submit(viewId, 'push')).resolves.toEqual({ ok: true, outcome: 'pushed' });
    expect(titles()).toEqual(['Updated', 'Pushed']);
    await expect(submit(viewId, 'clear')).resolves.toEqual({ ok: true, outcome: 'closed' });
    expect(emulator.state.views.list()).toEqual([]);
  });

  it('closes a view on an empty ack, and tells the app about a cancel when the view asked to be notified', async () => {
    const submitted = await openForm('U_BOB');
    await expect(submit(submitted, 'fine')).resolves.toEqual({ ok: true, outcome: 'closed' });
    const cancelled = await openForm('U_BOB');
    await delivery.closeView({ user: 'U_BOB', viewId: cancelled });
    expect(emulator.state.views.list()).toEqual([]);
    await waitUntil(() => received.some((entry) => entry.kind === 'view_closed'));
    expect(received.find((entry) => entry.kind === 'view_closed')?.body).toMatchObject({ user: { id: 'U_BOB' }, view: { id: cancelled } });
    await expect(delivery.closeView({ user: 'U_BOB', viewId: cancelled })).rejects.toMatchObject({ field: 'viewId' });
  });

  it('delivers a choice in an ephemeral, and respond() answers only the chooser', async () => {
    const ephemeral = emulator.state.ephemerals.post({ channel: 'C1', user: 'U_BOB', threadTs: '1.000001', text: 'choose' });
    const option = { text: { type: 'plain_text', text: 'Blue' }, value: 'blue' };
    await delivery.clickAction({
      user: 'U_BOB',
      channel: 'C1',
      container: { type: 'ephemeral', id: ephemeral.id },
      blockId: 'colours',
      actionId: 'pick',
      element: { type: 'static_select', options: [option] },
      selected: option,
    });
    await waitUntil(() => emulator.state.ephemerals.list().length === 2);
    expect(received[0]?.body).toMatchObject({ container: { is_ephemeral: true, message_ts: ephemeral.id, thread_ts: '1.000001' }, actions: [{ selected_option: { value: 'blue' } }] });
    expect(received[0]?.body.message).toBeUndefined();
    expect(emulator.state.ephemerals.list()[1]).toMatchObject({ user: 'U_BOB', text: 'picked blue', threadTs: '1.000001' });
  });

  it('sends a slash command form-encoded and shows the ack privately and an in_channel respond() to all', async () => {
    await delivery.runCommand({ user: 'U_CAROL', channel: 'C1', command: '/countersign', text: 'pending' });
    expect(emulator.state.ephemerals.list()).toMatchObject([{ user: 'U_CAROL', channel: 'C1', text: 'you said pending' }]);
    await waitUntil(() => emulator.state.messages.all().length === 1);
    expect(emulator.state.messages.all()[0]).toMatchObject({ text: 'for everyone', bot_id: emulator.state.identity.botId });
  });
});
