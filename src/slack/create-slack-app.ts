import { answerHealthCheck, answerMetrics, type HealthCheckedStore, type RenderMetrics } from '../runtime/health-check.js';
import { App, type CustomRoute, type Receiver } from '@slack/bolt';
import type { RetryOptions, WebClientOptions } from '@slack/web-api';
import type { Logger } from 'pino';
import { createBoltLogger } from '../log/bolt-logger.js';
import { sharedLeanFetch } from '../http/lean-fetch.js';
import { createObservedSlackFetch, type SlackApiFailure } from './observed-slack-fetch.js';
import { createUnrepeatedSlackWrites } from './unrepeated-slack-writes.js';
import { createPerCallRateLimits } from './per-call-rate-limits.js';
import { sendWellFormedSlackArguments } from './well-formed-web-client.js';

export interface SlackAppSettings {
  botToken: string;
  signingSecret?: string;
  appToken?: string;
  socketMode: boolean;
  apiUrl?: string;
  botUserId: string;
  botId: string;
  port: number;
}

/**
 * Outbound Slack calls retry a little, then give up: the default policy retries for about thirty
 * minutes, which would leave a thread silently waiting instead of saying something went wrong.
 * Posts are retried only when Slack cannot have applied them (`createUnrepeatedSlackWrites`); a
 * rate-limited call waits out its Retry-After before its next try (`createPerCallRateLimits`).
 */
export const SLACK_RETRY_CONFIG = { retries: 2, factor: 2, minTimeout: 300, maxTimeout: 2_000 };

/**
 * How the Web API client retries and sends: posts only when Slack cannot have applied them
 * (`createUnrepeatedSlackWrites`), and a 429 waited out by its own call (`createPerCallRateLimits`),
 * not by pausing every call of the process as the client does by default: Slack's limits are per
 * method, and a throttled status line must not hold back the cards and answers.
 */
export function slackTransport({
  fetch,
  pause,
  retryConfig = SLACK_RETRY_CONFIG,
}: {
  fetch: typeof globalThis.fetch;
  pause?: (ms: number) => Promise<void>;
  /** Default `SLACK_RETRY_CONFIG`; tests shorten its waits. */
  retryConfig?: RetryOptions;
}): Pick<WebClientOptions, 'retryConfig' | 'rejectRateLimitedCalls' | 'fetch'> {
  const writes = createUnrepeatedSlackWrites({ retryConfig, fetch });
  // Outside the write guard, which hands a 429 on untouched: Slack applied nothing.
  return { retryConfig: writes.retryConfig, rejectRateLimitedCalls: true, fetch: createPerCallRateLimits({ fetch: writes.fetch, ...(pause ? { pause } : {}) }) };
}

/** The transport: Bolt's HTTP receiver (or Socket Mode), the Web API client and the health route. */
export function createSlackApp({
  settings,
  health,
  logger,
  renderMetrics,
  onSlackApiFailure,
  receiver,
  retryConfig,
}: {
  settings: SlackAppSettings;
  /** What `GET /healthz` reads: the store, and the risks named beside it (`withOtherRisks`). */
  health: HealthCheckedStore;
  logger: Logger;
  renderMetrics?: RenderMetrics;
  /** Told of every failed Web API response (429s included), for the operator's metrics. */
  onSlackApiFailure?: (failure: SlackApiFailure) => void;
  /** Requests from elsewhere (the Slack front thread, which verified them) instead of Bolt's own HTTP server. */
  receiver?: Receiver;
  /** How the Web API client retries (default `SLACK_RETRY_CONFIG`). */
  retryConfig?: RetryOptions;
}): App {
  const healthRoute: CustomRoute = {
    path: '/healthz',
    method: ['GET'],
    handler: (_request, response) => answerHealthCheck(health, response),
  };
  const transport = slackTransport({ fetch: onSlackApiFailure ? createObservedSlackFetch({ onFailure: onSlackApiFailure }) : sharedLeanFetch(), ...(retryConfig ? { retryConfig } : {}) });
  const metricsRoutes: CustomRoute[] = renderMetrics ? [{ path: '/metrics', method: ['GET'], handler: (_request, response) => answerMetrics(renderMetrics, response) }] : [];
  // Before the app makes its clients: a lone surrogate in the model's words must not lose a post.
  sendWellFormedSlackArguments();
  return new App({
    token: settings.botToken,
    botId: settings.botId,
    botUserId: settings.botUserId,
    logger: createBoltLogger(logger),
    customRoutes: [healthRoute, ...metricsRoutes],
    // Bolt's in-memory conversation store is unused here (state lives in the store, shared by every
    // process); left on, it builds and throws away an Error for every request of a new conversation.
    convoStore: false,
    clientOptions: {
      ...(settings.apiUrl === undefined ? {} : { slackApiUrl: settings.apiUrl }),
      ...transport,
      timeout: 15_000,
    },
    ...(receiver
      ? { receiver }
      : settings.socketMode
        ? { socketMode: true, appToken: settings.appToken as string, port: settings.port }
        : { signingSecret: settings.signingSecret as string }),
  });
}
