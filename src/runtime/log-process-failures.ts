import type { Logger } from 'pino';

/**
 * Last resort: an exception thrown in some event callback (a tool source, a library) is logged and
 * the bot keeps serving instead of exiting with every running turn. Every effect of a turn is
 * fenced and every transition atomic in the store, so going on is safe; tool sources guard their
 * own callbacks, and landing here is a bug to fix there. Socket Mode's client also rejects pending
 * reconnects with nothing attached when it is stopped during an outage. Installed by the process's
 * main thread and by the bot's thread behind the Slack front (a thread's `process` events are its
 * own). Returns what takes the handlers off again.
 */
export function logProcessFailures(logger: Logger): () => void {
  const onException = (error: Error, origin: NodeJS.UncaughtExceptionOrigin) => {
    logger.error({ event: 'uncaught-exception', err: error, origin }, 'uncaught exception; still running');
  };
  const onRejection = (reason: unknown) => {
    logger.error({ event: 'unhandled-rejection', err: reason }, 'unhandled promise rejection');
  };
  process.on('uncaughtException', onException);
  process.on('unhandledRejection', onRejection);
  return () => {
    process.off('uncaughtException', onException);
    process.off('unhandledRejection', onRejection);
  };
}
