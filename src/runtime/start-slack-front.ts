import type { AddressInfo } from 'node:net';
import { Worker } from 'node:worker_threads';
import type { Logger } from 'pino';
import type { EnvironmentConfig } from '../config/environment.js';
import type { BotToFront } from '../slack/front/front-messages.js';
import { createSlackFrontServer } from '../slack/front/slack-front-server.js';
import { metricsPlacement } from '../http/metrics-placement.js';

export interface SlackFront {
  port: number;
  /** Stops taking requests, lets the bot's thread finish its running turns, then ends it. */
  stop(): Promise<void>;
}

/**
 * COUNTERSIGN_SLACK_FRONT=thread: starts the bot on a thread of its own (`bot-thread.js`) and, once
 * it is running, serves Slack's HTTP requests from this thread (`createSlackFrontServer`). If the
 * bot's thread fails, this process stops: a front without a bot would ack work no one handles.
 */
export async function startSlackFront(options: {
  environment: EnvironmentConfig;
  logger: Logger;
  onBotFailure: (error: Error) => void;
  /** The bot's thread could not write its logs (see `whenOutputBreaks`). */
  onOutputBroken?: (failure: string) => void;
}): Promise<SlackFront> {
  const { environment, logger } = options;
  const signingSecret = environment.slack.signingSecret;
  if (signingSecret === undefined) throw new Error('COUNTERSIGN_SLACK_FRONT=thread needs SLACK_SIGNING_SECRET');
  const bot = new Worker(new URL('../bot-thread.js', import.meta.url));
  let stopping = false;
  const started = new Promise<void>((resolve, reject) => {
    const onMessage = (message: BotToFront) => {
      if (message.kind !== 'ready') return;
      bot.off('message', onMessage);
      resolve();
    };
    bot.on('message', onMessage);
    bot.once('error', reject);
    bot.once('exit', (code) => reject(new Error(`the bot thread exited with code ${code} while starting`)));
  });
  bot.on('message', (message: BotToFront) => {
    if (message.kind === 'output-broken') options.onOutputBroken?.(message.failure);
  });
  await started;
  bot.on('error', (error) => options.onBotFailure(error));
  bot.on('exit', (code) => {
    if (!stopping) options.onBotFailure(new Error(`the bot thread exited with code ${code}`));
  });

  // The bot's thread serves METRICS_PORT itself, and logs where the metrics are.
  const front = createSlackFrontServer({ signingSecret, bot, logger, servesMetrics: metricsPlacement(environment).kind === 'main-port' });
  const { server } = front;
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(environment.slack.port, resolve));
  const port = (server.address() as AddressInfo).port;
  logger.info({ event: 'started', mode: 'http', role: environment.role, front: 'thread', port }, 'countersign listening');

  return {
    port,
    async stop() {
      stopping = true;
      // Bounded: a request someone never finishes sending must not keep the bot's thread from its
      // `stop` (it would go on taking work) nor the process from exiting. Every acked request is in
      // the bot's channel before `stop`.
      await front.close();
      const stopped = new Promise<void>((resolve, reject) => {
        bot.on('message', (message: BotToFront) => {
          if (message.kind === 'stopped') resolve();
        });
        // A thread that could not stop its bot says so and exits 1: the process's stop failed too.
        bot.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`the bot thread exited with code ${code} while stopping`))));
      });
      bot.postMessage({ kind: 'stop' });
      await stopped;
      await bot.terminate();
    },
  };
}
