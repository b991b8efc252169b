import { ConfigError } from '../config/config-error.js';
import { logProcessFailures } from '../runtime/log-process-failures.js';
import { stopOnSignals } from '../runtime/stop-on-signals.js';
import { stopWhenBroken, watchLogOutput } from '../runtime/when-output-breaks.js';
import { startSandbox } from './start-sandbox.js';

/** `npm start` without Slack: start the sandbox, say where it is, and stop cleanly on SIGINT/SIGTERM. */
export async function runSandbox({ env }: { env: Record<string, string | undefined> }): Promise<void> {
  let sandbox;
  try {
    sandbox = await startSandbox({ env });
  } catch (error) {
    if (ConfigError.isInstance(error)) {
      process.stderr.write(`${error.message}\n`);
      process.exit(1);
    }
    if ((error as NodeJS.ErrnoException).code === 'EADDRINUSE') {
      process.stderr.write(`countersign sandbox: port ${env.PORT?.trim() || '3000'} is in use; set PORT to another port.\n`);
      process.exit(1);
    }
    throw error;
  }
  const model = sandbox.demoModel ? 'the built-in demo model (set OPENAI_API_KEY for a real one)' : 'the model from OPENAI_API_KEY';
  process.stdout.write(
    `countersign sandbox: ${sandbox.url}\n` +
      `  A local Slack workspace with the real bot and ${model}. No Slack credentials needed; set SLACK_BOT_TOKEN to run against Slack.\n`,
  );
  logProcessFailures(sandbox.logger);
  const logOutput = watchLogOutput({ stdout: process.stdout, stderr: process.stderr });
  stopWhenBroken(logOutput.broken, stopOnSignals({ logger: sandbox.logger, stop: () => sandbox.stop(), message: 'stopping the sandbox' }));
}
