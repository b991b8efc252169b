import { ConfigError } from './config/config-error.js';
import { loadConfigFile } from './config/config-file.js';
import { parseEnvironment } from './config/environment.js';
import { createBot } from './create-bot.js';
import { createLogger } from './log/create-logger.js';

/** The process entry point: configuration from the environment, then serve until told to stop. */
async function main(): Promise<void> {
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
  // Last resort, from before any tool source starts: an exception thrown in some event callback (a
  // tool source, a library) is logged and the bot keeps serving instead of exiting with every
  // running turn. Tool sources guard their own callbacks; landing here is a bug to fix there.
  process.on('uncaughtException', (error, origin) => {
    logger.error({ event: 'uncaught-exception', err: error, origin }, 'uncaught exception; still running');
  });
  // Socket Mode's client rejects pending reconnects with nothing attached when it is stopped during
  // an outage; crashing for that would drop running turns, so such rejections are logged instead.
  process.on('unhandledRejection', (reason) => {
    logger.error({ event: 'unhandled-rejection', err: reason }, 'unhandled promise rejection');
  });
  const bot = await createBot({ environment, config, logger, ...tuningFromEnvironment(process.env) });
  await bot.start();

  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ event: 'stopping', signal }, 'stopping: finishing running turns');
    bot.stop().then(
      () => process.exit(0),
      (error: unknown) => {
        logger.error({ event: 'stop-failed', err: error }, 'could not stop cleanly');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
}

/**
 * Operational knobs that are rarely changed and not part of the config file: how often each process
 * sweeps for expiries and stalled work, and how long a dead process's lock blocks its threads.
 */
function tuningFromEnvironment(env: NodeJS.ProcessEnv): { sweepIntervalMs?: number; lockTtlMs?: number } {
  const read = (name: string): number | undefined => {
    const value = env[name];
    if (value === undefined || value === '') return undefined;
    const parsed = Number(value);
    if (!Number.isInteger(parsed) || parsed < 10) throw new ConfigError({ problems: [{ field: name, message: 'must be a whole number of milliseconds, at least 10' }] });
    return parsed;
  };
  const sweepIntervalMs = read('COUNTERSIGN_SWEEP_INTERVAL_MS');
  const lockTtlMs = read('COUNTERSIGN_LOCK_TTL_MS');
  return { ...(sweepIntervalMs === undefined ? {} : { sweepIntervalMs }), ...(lockTtlMs === undefined ? {} : { lockTtlMs }) };
}

main().catch((error: unknown) => {
  process.stderr.write(`countersign failed to start: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
