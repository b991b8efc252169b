import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
// Bolt's receiver functions from their own module: the package's index also loads its apps,
// receivers and Web API client (9 MB of this thread's heap, against 1 MB), none of which runs here.
import * as HTTPModuleFunctions from '@slack/bolt/dist/receivers/HTTPModuleFunctions.js';
import type { Logger } from 'pino';
import { closeConnectionsAtStop, closeServer, PUBLIC_SERVER_TIMEOUTS } from '../../http/close-server.js';
import type { HttpReply } from '../../runtime/health-check.js';
import type { BotToFront, FrontChannel, FrontToBot } from './front-messages.js';

/**
 * Request types whose listeners only ever `ack()` with nothing: events (Bolt acks them itself) and
 * button clicks (Slack ignores what their ack says). The front answers these at once.
 */
const ACKED_BY_FRONT = new Set(['event_callback', 'block_actions']);
/** Slack stops waiting after 3 s; a reply the bot's thread has not given by then is not coming in time. */
export const REPLY_TIMEOUT_MS = 3_000;
/** Where Slack posts events and interactions, as with Bolt's own receiver. */
const EVENTS_PATH = '/slack/events';

export interface SlackFrontServer {
  server: Server;
  /**
   * Stops taking requests and resolves once every request Slack has its 200 for is in the bot's
   * channel: what `stop` is posted after then comes after them. A request not answered within
   * `STOP_DRAIN_MS` (Slack has stopped waiting; a body still being sent is not Slack's) has its
   * connection cut rather than holding the stop.
   */
  close(): Promise<void>;
}

/**
 * The thread that serves Slack's HTTP requests and nothing else: it verifies each request's
 * signature, answers what it can at once (events and clicks get their 200 before the bot's thread
 * sees them) and hands every verified request to the bot's thread. Its event loop never runs a
 * turn, a decision or a card update, so an ack does not wait behind them. Everything else is what
 * Bolt's HTTP receiver does (413 over the body limit, 401 on a bad signature, `ssl_check`, URL
 * verification), with Bolt's own functions.
 */
export function createSlackFrontServer(options: {
  signingSecret: string;
  bot: FrontChannel<BotToFront, FrontToBot>;
  logger: Logger;
  /**
   * Whether `GET /metrics` is served here too (`metricsPlacement`: only when METRICS_PORT equals
   * PORT). Otherwise it is a 404 from this thread: the internet reaches this port, and each scrape
   * would cost the bot's thread a read of the open steps.
   */
  servesMetrics?: boolean;
  /** How long `close()` lets requests in flight finish: default `STOP_DRAIN_MS`; tests shorten it. */
  stopDrainMs?: number;
}): SlackFrontServer {
  const { signingSecret, bot, logger, servesMetrics = false, stopDrainMs } = options;
  const routes = new Set(servesMetrics ? ['/healthz', '/metrics'] : ['/healthz']);
  let nextId = 0;
  /** Acked requests not yet posted to the bot's thread (see the `setImmediate` below). */
  const handingOver = new Set<Promise<void>>();
  const waiting = new Map<number, (reply: BotToFront) => void>();
  bot.on('message', (reply) => {
    if (!('id' in reply)) return;
    const settle = waiting.get(reply.id);
    waiting.delete(reply.id);
    settle?.(reply);
  });

  /** Sends `message` (given its id) and resolves with the bot's reply, or undefined past the timeout. */
  const ask = (message: (id: number) => FrontToBot): Promise<BotToFront | undefined> => {
    const id = (nextId += 1);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        waiting.delete(id);
        resolve(undefined);
      }, REPLY_TIMEOUT_MS);
      waiting.set(id, (reply) => {
        clearTimeout(timer);
        resolve(reply);
      });
      bot.postMessage(message(id));
    });
  };

  async function handleSlackRequest(request: IncomingMessage, response: ServerResponse): Promise<void> {
    let buffered: Awaited<ReturnType<typeof HTTPModuleFunctions.parseAndVerifyHTTPRequest>>;
    try {
      buffered = await HTTPModuleFunctions.parseAndVerifyHTTPRequest({ signingSecret, bodyLimit: HTTPModuleFunctions.defaultBodyLimit }, request, response);
    } catch (error) {
      if (HTTPModuleFunctions.isRawBodyError(error) && (error.type === 'entity.too.large' || error.statusCode === 413)) return HTTPModuleFunctions.buildNoBodyResponse(response, 413);
      logger.warn({ event: 'slack-request-unverified', err: error }, 'refused a Slack request that failed verification');
      return HTTPModuleFunctions.buildNoBodyResponse(response, 401);
    }
    let body: Record<string, unknown>;
    try {
      body = HTTPModuleFunctions.parseHTTPRequestBody(buffered);
    } catch (error) {
      logger.warn({ event: 'slack-request-malformed', err: error }, 'malformed Slack request body');
      return HTTPModuleFunctions.buildNoBodyResponse(response, 400);
    }
    if (body.ssl_check === '1') return HTTPModuleFunctions.buildSSLCheckResponse(response);
    if (body.type === 'url_verification') return HTTPModuleFunctions.buildUrlVerificationResponse(response, body);
    const retry = retryOf(request);
    if (typeof body.type === 'string' && ACKED_BY_FRONT.has(body.type)) {
      HTTPModuleFunctions.buildNoBodyResponse(response, 200);
      // The response is written to the socket on the next tick; copying the payload to the bot's
      // thread waits until then, so the ack never waits for the copy.
      const handOver = new Promise<void>((resolve) =>
        setImmediate(() => {
          bot.postMessage({ kind: 'acked', body, ...retry });
          resolve();
        }),
      );
      handingOver.add(handOver);
      void handOver.then(() => handingOver.delete(handOver));
      return;
    }
    const reply = await ask((id) => ({ kind: 'request', id, body, ...retry }));
    if (reply?.kind === 'ack') return HTTPModuleFunctions.buildContentResponse(response, reply.response);
    HTTPModuleFunctions.buildNoBodyResponse(response, reply === undefined ? 504 : 500);
  }

  async function handleRoute(path: string, response: ServerResponse): Promise<void> {
    const reply = await ask((id) => ({ kind: 'route', id, path }));
    const answer: HttpReply =
      reply?.kind === 'route-reply' ? reply.reply : { status: 503, contentType: 'application/json', body: JSON.stringify({ status: 'unavailable', error: 'the bot thread did not answer' }) };
    response.writeHead(answer.status, { 'content-type': answer.contentType });
    response.end(answer.body);
  }

  const server = closeConnectionsAtStop(
    createServer(PUBLIC_SERVER_TIMEOUTS, (request, response) => {
      const path = request.url?.split('?')[0] ?? '';
      const done = (work: Promise<void>) =>
        work.catch((error: unknown) => {
          logger.error({ event: 'slack-front-failed', err: error }, 'could not serve a request');
          if (!response.headersSent) HTTPModuleFunctions.buildNoBodyResponse(response, 500);
        });
      if (request.method === 'POST' && path === EVENTS_PATH) return void done(handleSlackRequest(request, response));
      if (request.method === 'GET' && routes.has(path)) return void done(handleRoute(path, response));
      HTTPModuleFunctions.buildNoBodyResponse(response, 404);
    }),
  );
  return {
    server,
    async close() {
      await closeServer(server, stopDrainMs === undefined ? {} : { drainMs: stopDrainMs });
      // A request whose body was all in has been verified and acked by now (its connection is
      // closed): only its hand-over may still wait for its turn.
      await Promise.all(handingOver);
    },
  };
}

function retryOf(request: IncomingMessage): { retryNum?: number; retryReason?: string } {
  const retryNum = HTTPModuleFunctions.extractRetryNumFromHTTPRequest(request);
  const retryReason = HTTPModuleFunctions.extractRetryReasonFromHTTPRequest(request);
  return { ...(retryNum === undefined ? {} : { retryNum }), ...(retryReason === undefined ? {} : { retryReason }) };
}
