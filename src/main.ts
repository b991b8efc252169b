// First, before anything else is evaluated: on an old Node.js it explains and exits.
import './runtime/require-node-version.js';
import { ConfigError, type ConfigProblem } from './config/config-error.js';
import { loadConfigFile } from './config/config-file.js';
import { parseEnvironment } from './config/environment.js';
import { createBot, type CreateBotOptions } from './create-bot.js';
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
 * sweeps for expiries and stalled work, how long a dead process's lock blocks its threads, and how
 * much turn work one process takes on.
 */
function tuningFromEnvironment(env: NodeJS.ProcessEnv): Pick<CreateBotOptions, 'sweepIntervalMs' | 'lockTtlMs' | 'maxConcurrentTurns' | 'maxEventLoopDelayMs'> {
  const problems: ConfigProblem[] = [];
  const read = (name: string, minimum: number, what: string): number | undefined => {
    const value = env[name]?.trim();
    if (value === undefined || value === '') return undefined;
    const parsed = Number(value);
    if (Number.isInteger(parsed) && parsed >= minimum) return parsed;
    problems.push({ field: name, message: `must be a whole number of ${what}, at least ${minimum}` });
    return undefined;
  };
  const tuning = {
    sweepIntervalMs: read('COUNTERSIGN_SWEEP_INTERVAL_MS', 10, 'milliseconds'),
    lockTtlMs: read('COUNTERSIGN_LOCK_TTL_MS', 10, 'milliseconds'),
    maxConcurrentTurns: read('COUNTERSIGN_MAX_CONCURRENT_TURNS', 1, 'turns'),
    maxEventLoopDelayMs: read('COUNTERSIGN_MAX_EVENT_LOOP_DELAY_MS', 10, 'milliseconds'),
  };
  if (problems.length > 0) throw new ConfigError({ problems });
  return Object.fromEntries(Object.entries(tuning).filter(([, value]) => value !== undefined));
}

main().catch((error: unknown) => {
  process.stderr.write(`countersign failed to start: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
