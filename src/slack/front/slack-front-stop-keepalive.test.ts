import { once } from 'node:events';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { MessageChannel } from 'node:worker_threads';
import { App } from '@slack/bolt';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { slackSignature } from '../../../test/helpers/signed-request.js';
import { createForwardedReceiver } from './forwarded-receiver.js';
import type { BotToFront, FrontChannel, FrontToBot } from './front-messages.js';
import { createSlackFrontServer, type SlackFrontServer } from './slack-front-server.js';

/**
 * A connection with a request in flight when the stop begins must not carry another: Node keeps it
 * alive after `close()` (its answer still says `Connection: keep-alive`), so whatever sits in front
 * of PORT (an ingress / load balancer keeping upstream connections, or Slack itself) would send its
 * next request on it during the drain: the front would take it, hand it to the bot (which runs it),
 * and the cut at 3 s would reset the connection before its answer, though the sender is still well
 * within Slack's 3 s. A slash command or modal submit would then fail for the user (a 502 / "trouble
 * connecting") after the bot acted on it. (Found in review of 574c7c4.)
 */
const SECRET = 'front-signing-secret';
const logger = pino({ level: 'silent' });
const quiet = { debug() {}, info() {}, warn() {}, error() {}, setLevel() {}, getLevel: () => 'error' as never, setName() {} } as never;

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

function signedCommand(text: string): string {
  const body = new URLSearchParams({ command: '/countersign', text, user_id: 'UBOB', team_id: 'T1', channel_id: 'C1' }).toString();
  const timestamp = Math.floor(Date.now() / 1000);
  return [
    'POST /slack/events HTTP/1.1',
    'Host: bot',
    'Connection: keep-alive',
    'Content-Type: application/x-www-form-urlencoded',
    `Content-Length: ${Buffer.byteLength(body)}`,
    `X-Slack-Request-Timestamp: ${timestamp}`,
    `X-Slack-Signature: ${slackSignature({ signingSecret: SECRET, timestamp, body })}`,
    '',
    body,
  ].join('\r\n');
}

/** Reads one HTTP response (no chunked bodies here) from the socket, or 'closed' if it closes first. */
function nextResponse(socket: Socket): Promise<string> {
  return new Promise((resolve) => {
    let text = '';
    const onData = (chunk: Buffer) => {
      text += chunk.toString();
      const end = text.indexOf('\r\n\r\n');
      if (end < 0) return;
      const length = Number(/content-length: *(\d+)/i.exec(text.slice(0, end))?.[1] ?? 0);
      if (text.length >= end + 4 + length) finish(text);
    };
    const onClose = () => finish(text === '' ? 'closed' : `${text} [closed]`);
    const finish = (result: string) => {
      socket.off('data', onData);
      socket.off('close', onClose);
      resolve(result);
    };
    socket.on('data', onData);
    socket.on('close', onClose);
  });
}

describe('the Slack front at stop', () => {
  it('does not take a new request on a kept-alive connection during the drain only to cut it before its answer', async () => {
    const { port1, port2 } = new MessageChannel();
    const receiver = createForwardedReceiver({
      front: port2 as unknown as FrontChannel<FrontToBot, BotToFront>,
      logger,
      route: async () => ({ status: 200, contentType: 'application/json', body: '{}' }),
    });
    const app = new App({ token: 'xoxb-front', botId: 'BFRONT', botUserId: 'UFRONT', receiver, logger: quiet });
    const ran: string[] = [];
    let firstTaken!: () => void;
    const firstSeen = new Promise<void>((resolve) => (firstTaken = resolve));
    let releaseFirst!: () => void;
    const firstReleased = new Promise<void>((resolve) => (releaseFirst = resolve));
    app.command('/countersign', async ({ ack, command }) => {
      ran.push(command.text);
      if (command.text === 'first') {
        firstTaken();
        await firstReleased;
      } else {
        // The bot thread answers in 1.5 s: slow, but well within the 3 s Slack waits.
        await new Promise((resolve) => setTimeout(resolve, 1_500));
      }
      await ack({ text: `done: ${command.text}` });
    });
    await app.start();
    const front: SlackFrontServer = createSlackFrontServer({ signingSecret: SECRET, bot: port1 as unknown as FrontChannel<BotToFront, FrontToBot>, logger });
    await new Promise<void>((resolve) => front.server.listen(0, '127.0.0.1', resolve));
    const { port } = front.server.address() as AddressInfo;
    cleanups.push(() => {
      port1.close();
      return app.stop();
    });

    // An upstream connection (an ingress's, say) with a request in flight as SIGTERM comes.
    const socket = connect(port, '127.0.0.1');
    socket.on('error', () => {});
    cleanups.push(() => socket.destroy());
    await once(socket, 'connect');
    const first = nextResponse(socket);
    socket.write(signedCommand('first'));
    await firstSeen;
    const closing = front.close();
    releaseFirst();
    const firstAnswer = await first;
    expect(firstAnswer).toMatch(/^HTTP\/1\.1 200/);
    // Had the answer said `Connection: close`, the sender would open a new connection (to another
    // replica): nothing more to check. It says keep-alive, so the next request comes on this one.
    if (/\r\nconnection: *close\r\n/i.test(firstAnswer)) {
      // ...and the front closes it, so no request can follow on it.
      if (!socket.closed) await once(socket, 'close');
      expect(ran).toEqual(['first']);
      return;
    }

    // The next slash command, 2 s into the 3 s drain, on the same connection.
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    const second = nextResponse(socket);
    socket.write(signedCommand('second'));
    const secondAnswer = await second;
    await closing;
    // The bot ran it...
    expect(ran).toEqual(['first', 'second']);
    // ...and the sender, who sent it 1 s before the cut and waits 3 s, got no answer: the drain cut it.
    expect(secondAnswer).toMatch(/^HTTP\/1\.1 200/);
  }, 15_000);
});
