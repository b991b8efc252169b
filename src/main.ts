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
  const bot = await createBot({ environment, config, logger, ...tuningFromEnvironment(process.env) });
  await bot.start();

  stopOnSignals({ logger, stop: () => bot.stop(), message: 'stopping: finishing running turns' });
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
