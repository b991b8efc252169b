import { once } from 'node:events';
import { connect, type AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { MessageChannel } from 'node:worker_threads';
import { App } from '@slack/bolt';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { appMentionEnvelope, blockActionsPayload, postSlackEvent, postSlackInteraction, postSlashCommand, viewSubmissionPayload } from '../../../test/helpers/signed-request.js';
import { createForwardedReceiver } from './forwarded-receiver.js';
import type { BotToFront, FrontChannel, FrontToBot } from './front-messages.js';
import { createSlackFrontServer } from './slack-front-server.js';

const SECRET = 'front-signing-secret';
const logger = pino({ level: 'silent' });

/**
 * The front and the bot's Bolt app joined by a MessageChannel, as `main.js` joins them across
 * threads: real signed HTTP requests in, Bolt's own listeners and acks on the other side.
 */
async function startFront(register: (app: App) => void, options: { botBusy?: boolean; servesMetrics?: boolean; stopDrainMs?: number } = {}) {
  const { port1, port2 } = new MessageChannel();
  const toBot: FrontToBot[] = [];
  const bot = port1 as unknown as FrontChannel<BotToFront, FrontToBot>;
  // A busy bot thread: what the front sends it waits until the test lets it through.
  let held: FrontToBot[] | undefined = options.botBusy ? [] : undefined;
  const releaseBot = () => {
    const waiting = held ?? [];
    held = undefined;
    for (const message of waiting) bot.postMessage(message);
  };
  const counted: FrontChannel<BotToFront, FrontToBot> = {
    postMessage: (message) => {
      toBot.push(message);
      if (held) held.push(message);
      else bot.postMessage(message);
    },
    on: (event, listener) => bot.on(event, listener),
    off: (event, listener) => bot.off(event, listener),
  };
  const receiver = createForwardedReceiver({
    front: port2 as unknown as FrontChannel<FrontToBot, BotToFront>,
    logger,
    route: async (path) => ({ status: 200, contentType: 'application/json', body: JSON.stringify({ path }) }),
  });
  const app = new App({ token: 'xoxb-front', botId: 'BFRONT', botUserId: 'UFRONT', receiver, logger: { debug() {}, info() {}, warn() {}, error() {}, setLevel() {}, getLevel: () => 'error' as never, setName() {} } as never });
  register(app);
  await app.start();
  const front = createSlackFrontServer({
    signingSecret: SECRET,
    bot: counted,
    logger,
    ...(options.servesMetrics === undefined ? {} : { servesMetrics: options.servesMetrics }),
    ...(options.stopDrainMs === undefined ? {} : { stopDrainMs: options.stopDrainMs }),
  });
  const { server } = front;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  opened.push({ server, close: () => (port1.close(), app.stop()) });
  return { url, events: `${url}/slack/events`, toBot, releaseBot, front, port: (server.address() as AddressInfo).port };
}

const opened: Array<{ server: Server; close: () => unknown }> = [];
afterEach(async () => {
  for (const { server, close } of opened.splice(0)) {
    await new Promise((resolve) => server.close(resolve));
    await close();
  }
});

/** A promise and its resolver, for a listener to wait on what the test says. */
function gate<T = void>() {
  let open!: (value: T) => void;
  const opened = new Promise<T>((resolve) => {
    open = resolve;
  });
  return { open, opened };
}

describe('the Slack front', () => {
  it('acks mentions and clicks while the bot thread is busy, then the bot handles them', async () => {
    const mentioned = gate<string>();
    const clicked = gate<string>();
    const { events, releaseBot } = await startFront(
      (app) => {
        app.event('app_mention', async ({ event }) => mentioned.open(event.text));
        app.action('approve', async ({ ack, body }) => {
          await ack();
          clicked.open(body.user.id);
        });
      },
      { botBusy: true },
    );
    const mention = await postSlackEvent({ url: events, signingSecret: SECRET, envelope: appMentionEnvelope({ user: 'UALICE', text: '<@UFRONT> restart', channel: 'C1' }) });
    const click = await postSlackInteraction({ url: events, signingSecret: SECRET, payload: blockActionsPayload({ user: 'UBOB', channel: 'C1', messageTs: '1.1', actionId: 'approve', value: 'x' }) });
    // Answered while the bot thread has not even seen them: no ack waits for it.
    expect([mention.status, click.status]).toEqual([200, 200]);
    expect(await mention.text()).toBe('');
    releaseBot();
    expect(await mentioned.opened).toBe('<@UFRONT> restart');
    expect(await clicked.opened).toBe('UBOB');
  });

  it('acks a click at once and hands it to the listener', async () => {
    const clicked = gate<string>();
    const { events } = await startFront((app) =>
      app.action('approve', async ({ ack, body }) => {
        await ack();
        clicked.open(body.user.id);
      }),
    );
    const response = await postSlackInteraction({ url: events, signingSecret: SECRET, payload: blockActionsPayload({ user: 'UBOB', channel: 'C1', messageTs: '1.1', actionId: 'approve', value: 'x' }) });
    expect(response.status).toBe(200);
    expect(await clicked.opened).toBe('UBOB');
  });

  it("answers a modal submission with the bot's ack: field errors reach Slack", async () => {
    const { events } = await startFront((app) =>
      app.view('edit', async ({ ack }) => {
        await ack({ response_action: 'errors', errors: { namespace: 'must be one of staging, prod' } });
      }),
    );
    const response = await postSlackInteraction({ url: events, signingSecret: SECRET, payload: viewSubmissionPayload({ user: 'UBOB', callbackId: 'edit', privateMetadata: '{}', values: {} }) });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ response_action: 'errors', errors: { namespace: 'must be one of staging, prod' } });
  });

  it('answers 500 when the listener fails before acking, instead of leaving Slack waiting', async () => {
    const { events } = await startFront((app) =>
      app.command('/countersign', async () => {
        throw new Error('listener broke');
      }),
    );
    const response = await postSlashCommand({ url: events, signingSecret: SECRET, fields: { command: '/countersign', text: 'help', user_id: 'UBOB', team_id: 'T1', channel_id: 'C1' } });
    expect(response.status).toBe(500);
  });

  it('refuses a request with a bad signature and hands nothing to the bot', async () => {
    const mentioned = gate();
    const { events, toBot } = await startFront((app) => app.event('app_mention', async () => mentioned.open()));
    const response = await postSlackEvent({ url: events, signingSecret: 'not-the-secret', envelope: appMentionEnvelope({ user: 'UEVE', text: '<@UFRONT> deploy', channel: 'C1' }) });
    expect(response.status).toBe(401);
    // The front decides before it answers: nothing was sent to the bot's thread.
    expect(toBot).toEqual([]);
  });

  it("answers Slack's URL verification itself, and asks the bot's thread for /healthz", async () => {
    const { url, events } = await startFront(() => {});
    const verification = await postSlackEvent({ url: events, signingSecret: SECRET, envelope: { type: 'url_verification', challenge: 'c-123', token: 'legacy' } });
    expect(await verification.json()).toEqual({ challenge: 'c-123' });
    const health = await fetch(`${url}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ path: '/healthz' });
    expect((await fetch(`${url}/elsewhere`)).status).toBe(404);
  });

  it('closes without waiting on a request whose body never comes, after handing the bot every request it acked', async () => {
    const { events, toBot, front, port } = await startFront(() => {}, { stopDrainMs: 200 });
    // Unsigned, and 9 of its 100000 bytes sent: anyone on the internet can open this.
    const stalled = connect(port, '127.0.0.1');
    stalled.on('error', () => {});
    const taken = once(front.server, 'request');
    stalled.write('POST /slack/events HTTP/1.1\r\nHost: bot\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{"type":');
    await taken;
    // A click acked as the stop begins: closing starts the moment its 200 is written.
    let closing: Promise<void> | undefined;
    front.server.once('request', (_request, response) => response.once('finish', () => (closing = front.close())));
    const click = await postSlackInteraction({ url: events, signingSecret: SECRET, payload: blockActionsPayload({ user: 'UBOB', channel: 'C1', messageTs: '1.1', actionId: 'approve', value: 'x' }) });
    expect(click.status).toBe(200);
    expect(closing).toBeDefined();
    await closing;
    expect(toBot.map((message) => message.kind)).toEqual(['acked']);
    // The stalled connection was cut, not waited for.
    if (!stalled.closed) await once(stalled, 'close');
    expect(stalled.closed).toBe(true);
  });

  it("refuses /metrics on Slack's port without asking the bot's thread, unless told to serve it there", async () => {
    const closed = await startFront(() => {});
    expect((await fetch(`${closed.url}/metrics`)).status).toBe(404);
    expect(closed.toBot).toEqual([]);

    const open = await startFront(() => {}, { servesMetrics: true });
    const metrics = await fetch(`${open.url}/metrics`);
    expect(metrics.status).toBe(200);
    expect(await metrics.json()).toEqual({ path: '/metrics' });
  });
});
