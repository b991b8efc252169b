// First, before anything else is evaluated: on an old Node.js it explains and exits.
import './runtime/require-node-version.js';
import { ConfigError } from './config/config-error.js';
import { loadConfigFile } from './config/config-file.js';
import { parseEnvironment } from './config/environment.js';
import { environmentSecrets } from './config/environment-secrets.js';
import { createLogger } from './log/create-logger.js';
import { wantsSandbox } from './sandbox/wants-sandbox.js';
import { logProcessFailures } from './runtime/log-process-failures.js';
import { stopOnSignals } from './runtime/stop-on-signals.js';
import { startSlackFront } from './runtime/start-slack-front.js';
import { runTurnsBelowAcks } from './runtime/thread-priority.js';
import { stopWhenBroken, watchLogOutput } from './runtime/when-output-breaks.js';

/** The process entry point: configuration from the environment, then serve until told to stop. */
async function main(): Promise<void> {
  // Loaded only here: the sandbox brings the whole bot and its emulator, which the thread that serves
  // Slack would otherwise carry in its heap (30 MB) and walk at every full collection.
  if (wantsSandbox(process.env)) return (await import('./sandbox/run-sandbox.js')).runSandbox({ env: process.env });
  let environment;
  let config;
  try {
    environment = parseEnvironment(process.env);
    config = await loadConfigFile(environment.configPath);
  } catch (error) {
    if (ConfigError.isInstance(error)) {
      process.stderr.write(`${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
  const logger = createLogger({ level: environment.logLevel, secrets: environmentSecrets(environment) });
  // Before any tool source starts.
  logProcessFailures(logger);
  // Before the first log line: a stdout nobody reads any more would otherwise loop (see there). The
  // bot's thread, when there is one, writes its logs itself and says when it could not.
  const logOutput = watchLogOutput({ stdout: process.stdout, stderr: process.stderr });
  if (environment.slackFront === 'thread') {
    // This thread only serves Slack's HTTP requests; the bot runs on a thread of its own.
    const front = await startSlackFront({
      environment,
      logger,
      onBotFailure: (error) => {
        logger.fatal({ event: 'bot-thread-failed', err: error }, 'the bot thread failed; stopping');
        process.exit(1);
      },
      onOutputBroken: logOutput.otherWriterFailed,
    });
    stopWhenBroken(logOutput.broken, stopOnSignals({ logger, stop: () => front.stop(), message: 'stopping: finishing running turns' }));
    return;
  }
  if (environment.role === 'worker') {
    // Turns only: on a host it shares with receivers, their acks come first. Before the bot starts,
    // so the command spawner and stdio MCP servers inherit it.
    runTurnsBelowAcks({ nice: environment.tuning.turnThreadNice, logger });
  }
  // Loaded only here: a front thread needs none of it.
  const { createBot } = await import('./create-bot.js');
  const bot = await createBot({ environment, config, logger });
  await bot.start();

  stopWhenBroken(logOutput.broken, stopOnSignals({ logger, stop: () => bot.stop(), message: 'stopping: finishing running turns' }));
}

main().catch((error: unknown) => {
  process.stderr.write(`countersign failed to start: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
