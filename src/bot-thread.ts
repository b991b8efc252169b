// The bot's thread when COUNTERSIGN_SLACK_FRONT=thread: main.js serves Slack's HTTP requests on its
// own thread and starts this one for everything else.
import { parentPort } from 'node:worker_threads';
import { pino } from 'pino';
import { loadConfigFile } from './config/config-file.js';
import { parseEnvironment } from './config/environment.js';
import { createBot } from './create-bot.js';
import { environmentSecrets } from './config/environment-secrets.js';
import { createLogger } from './log/create-logger.js';
import { logProcessFailures } from './runtime/log-process-failures.js';
import { runTurnsBelowAcks } from './runtime/thread-priority.js';
import { whenOutputBreaks } from './runtime/when-output-breaks.js';
import type { BotToFront, FrontChannel, FrontToBot } from './slack/front/front-messages.js';

/** Takes the last-resort handlers off again, once they are on (see the end of this file). */
let stopLoggingFailures = () => {};

async function main(): Promise<void> {
  if (!parentPort) throw new Error('bot-thread.js is started by main.js (COUNTERSIGN_SLACK_FRONT=thread), not on its own');
  const front = parentPort as unknown as FrontChannel<FrontToBot, BotToFront>;
  const environment = parseEnvironment(process.env);
  const config = await loadConfigFile(environment.configPath);
  // Straight to the process's stdout: through `process.stdout` every line would be written by the
  // front's thread. Written as logged, so no line is lost when the process exits.
  const destination = pino.destination({ dest: 1, sync: true });
  const logger = createLogger({ level: environment.logLevel, destination, secrets: environmentSecrets(environment) });
  // Before any tool source starts, as main.js does for a process without a front. A thread's stray
  // exceptions and rejections are its own `process`'s events: the front's handlers never see them,
  // and without these one would end this thread, and with it the process (`onBotFailure`).
  stopLoggingFailures = logProcessFailures(logger);
  // pino stops writing to a destination that got EPIPE, silently: without this the process would run on
  // with its logs gone whenever only this thread writes. The front says so and stops the process.
  void whenOutputBreaks({ output: destination }).then((failure) => front.postMessage({ kind: 'output-broken', failure }));
  // Before anything starts, so what this thread starts (the command spawner, stdio MCP servers) runs
  // at the same priority: below the front's, whose acks must not wait for a core.
  runTurnsBelowAcks({ nice: environment.tuning.turnThreadNice, logger });
  const bot = await createBot({ environment, config, logger, slackFront: front });
  await bot.start();
  const onMessage = (message: FrontToBot) => {
    if (message.kind !== 'stop') return;
    front.off('message', onMessage);
    void bot.stop().then(
      () => front.postMessage({ kind: 'stopped' }),
      (error: unknown) => {
        // As a process without a front (`stopOnSignals`): said, and exit 1, which the front passes on.
        // Left to the handlers above, the front would wait for `stopped` forever.
        logger.error({ event: 'stop-failed', err: error }, 'could not stop cleanly');
        process.exit(1);
      },
    );
  };
  front.on('message', onMessage);
  front.postMessage({ kind: 'ready' });
}

// An error here ends the thread; the front's thread reports it and stops the process. Not left to
// the handlers above: they would log it as a stray one and keep a thread that never says it is ready.
await main().catch((error: unknown) => {
  stopLoggingFailures();
  throw error;
});
