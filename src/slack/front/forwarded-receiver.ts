import type { App, Receiver, ReceiverEvent } from '@slack/bolt';
import type { Logger } from 'pino';
import type { HttpReply } from '../../runtime/health-check.js';
import type { BotToFront, FrontChannel, FrontToBot } from './front-messages.js';

/**
 * The bot thread's side of the Slack front: a Bolt receiver fed the requests the front verified.
 * Bolt runs them as it would its own HTTP receiver's (middleware, listeners, `ack`); an `ack` goes
 * back to the front, which answers Slack with it, unless the front answered already.
 */
export function createForwardedReceiver(options: { front: FrontChannel<FrontToBot, BotToFront>; logger: Logger; route: (path: string) => Promise<HttpReply> }): Receiver {
  const { front, logger } = options;
  let app: App | undefined;

  const handle = (message: Extract<FrontToBot, { kind: 'acked' | 'request' }>) => {
    let acked = message.kind === 'acked';
    const event: ReceiverEvent = {
      body: message.body,
      ...(message.retryNum === undefined ? {} : { retryNum: message.retryNum }),
      ...(message.retryReason === undefined ? {} : { retryReason: message.retryReason }),
      ack: async (response?: unknown) => {
        if (acked) return;
        acked = true;
        if (message.kind === 'request') front.postMessage({ kind: 'ack', id: message.id, ...(response === undefined ? {} : { response }) });
      },
    };
    app?.processEvent(event).catch((error: unknown) => {
      logger.error({ event: 'slack-request-failed', err: error }, 'a Slack request failed');
      if (!acked && message.kind === 'request') {
        acked = true;
        front.postMessage({ kind: 'failed', id: message.id });
      }
    });
  };

  const onMessage = (message: FrontToBot) => {
    if (message.kind === 'stop') return;
    if (message.kind !== 'route') return handle(message);
    options.route(message.path).then(
      (reply) => front.postMessage({ kind: 'route-reply', id: message.id, reply }),
      () => front.postMessage({ kind: 'route-reply', id: message.id, reply: { status: 500, contentType: 'application/json', body: '{"error":"could not answer"}' } }),
    );
  };

  return {
    init(given) {
      app = given;
    },
    async start() {
      front.on('message', onMessage);
      return {};
    },
    async stop() {
      front.off('message', onMessage);
    },
  };
}
