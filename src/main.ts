// First, before anything else is evaluated: on an old Node.js it explains and exits.
import './runtime/require-node-version.js';
import { ConfigError } from './config/config-error.js';
import { loadConfigFile } from './config/config-file.js';
import { parseEnvironment } from './config/environment.js';
import { createBot } from './create-bot.js';
import { createLogger } from './log/create-logger.js';
import { runSandbox, wantsSandbox } from './sandbox/run-sandbox.js';
import { logProcessFailures } from './runtime/log-process-failures.js';
import { stopOnSignals } from './runtime/stop-on-signals.js';

/** The process entry point: configuration from the environment, then serve until told to stop. */
async function main(): Promise<void> {
  if (wantsSandbox(process.env)) return runSandbox({ env: process.env });
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
  const logger = createLogger({ level: environment.logLevel });
  // Before any tool source starts.
  logProcessFailures(logger);
  const bot = await createBot({ environment, config, logger });
  await bot.start();

  stopOnSignals({ logger, stop: () => bot.stop(), message: 'stopping: finishing running turns' });
}

main().catch((error: unknown) => {
  process.stderr.write(`countersign failed to start: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
